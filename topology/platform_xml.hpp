// Writing a PlatformPlan as a SimGrid 3.32 platform XML file (DTD 4.1).
#pragma once

#include <ostream>
#include <string>

#include "topology/platform_plan.hpp"

namespace epsim::topology {

// Writes the plan as XML; `title` goes into the opening comment.
void write_platform_xml(const PlatformPlan& plan, const std::string& title, std::ostream& out);

}  // namespace epsim::topology
