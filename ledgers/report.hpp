// Reports of the bounds ledgers: text that prints every figure next to its
// formula and provenance (as the seeds do), and JSON that carries every
// figure of that text plus the same formula and provenance strings.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "ledgers/comm_ledger.hpp"
#include "ledgers/ep_comm.hpp"
#include "ledgers/step_budget.hpp"
#include "ledgers/train_step.hpp"

namespace epsim::ledgers {

using Json = nlohmann::ordered_json;

std::string render_text(const CommLedger& ledger);  // bounds_report_comm.cpp
Json to_json(const CommLedger& ledger);

std::string render_text(const TrainStep& step);     // bounds_report_train.cpp
Json to_json(const TrainStep& step);

std::string render_text(const StepBudget& budget);  // bounds_report_budget.cpp
Json to_json(const StepBudget& budget);

std::string render_text(const EpComm& comm);        // bounds_report_ep.cpp
Json to_json(const EpComm& comm);

}  // namespace epsim::ledgers
