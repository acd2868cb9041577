// run_child_jobs: every job runs in its own child, at most `parallel` at
// once, each verdict heard once, however long its text, errors carried back.
#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "app/child_job.hpp"
#include "core/error.hpp"

TEST_CASE("run_child_jobs hears every job once, long texts and errors included") {
  int next = 0;
  std::map<std::string, std::string> outputs;
  std::map<std::string, std::string> errors;
  epsim::app::run_child_jobs(
      2,
      [&]() -> std::optional<epsim::app::ChildJob> {
        if (next == 6) return std::nullopt;
        const int i = next++;
        return epsim::app::ChildJob{std::to_string(i), [i]() -> std::string {
                                      if (i == 3) throw epsim::InputError({"f.toml", 2, 5}, "parallel.ep", "bad");
                                      if (i == 4) throw std::runtime_error("boom");
                                      return std::string(static_cast<std::size_t>(200000 + i), 'a' + i);  // beyond a pipe's buffer
                                    }};
      },
      [&](const epsim::app::ChildJob& job, epsim::app::ChildVerdict verdict) {
        REQUIRE(outputs.count(job.what) + errors.count(job.what) == 0);
        if (!verdict.error) {
          outputs[job.what] = verdict.output;
          return;
        }
        try {
          std::rethrow_exception(verdict.error);
        } catch (const epsim::InputError& e) {
          errors[job.what] = "input: " + e.key() + " " + e.problem() + " " + e.where().file;
        } catch (const std::exception& e) {
          errors[job.what] = e.what();
        }
      });
  CHECK(outputs.size() == 4);
  for (int i : {0, 1, 2, 5}) CHECK(outputs[std::to_string(i)] == std::string(static_cast<std::size_t>(200000 + i), 'a' + i));
  CHECK(errors["3"] == "input: parallel.ep bad f.toml");
  CHECK(errors["4"] == "4: boom");
}
