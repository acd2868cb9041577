// Text and JSON report of seed 003 part B's EP communication model.
#include <fmt/format.h>

#include "ledgers/format.hpp"
#include "ledgers/report.hpp"

namespace epsim::ledgers {

namespace {
const char* const kSource = "seed 003 ascend_map.py part B";
const char* const kPerToken = "k*d*b per token per direction";
const char* const kTotal = "tokens*k*d*b per direction, one layer, the whole layer's traffic";
const char* const kActivation = "tokens*d*b";
const char* const kTime = "bytes / bandwidth; placeholder bandwidths, not any device's figure";
}  // namespace

std::string render_text(const EpComm& c) {
  const EpCommOptions& o = c.options;
  std::string out;
  out += fmt::format("== {}: expert-parallel (EP) communication of one layer ==\n", kSource);
  out += fmt::format(" tokens={} top_k={} d_model={} bytes per element {}\n", o.tokens, o.top_k,
                     o.d_model, o.bytes);
  out += fmt::format(" per token per direction: k*d*b = {} B = {} KB\n", c.per_token_bytes,
                     fixed(static_cast<double>(c.per_token_bytes) / 1024.0, 1));
  out += fmt::format(" dispatch total : {} MB = {}\n", fixed(static_cast<double>(c.dispatch_bytes) / 1e6, 1), kTotal);
  out += fmt::format(" combine total  : {} MB (= dispatch)\n", fixed(static_cast<double>(c.combine_bytes) / 1e6, 1));
  out += fmt::format(" sum            : {} MB\n", fixed(static_cast<double>(c.total_bytes) / 1e6, 1));
  out += fmt::format(" activation bytes {} MB = {}; dispatch + combine move {} x the activations\n",
                     fixed(static_cast<double>(c.activation_bytes) / 1e6, 1), kActivation,
                     fixed(c.ratio_to_activation, 1));
  out += fmt::format(" time = {}\n", kTime);
  out += fmt::format(" {:>12} | {:>16} | {:>16}\n", "BW (GB/s)", "dispatch time", "combine time");
  for (const EpCommTime& t : c.times) {
    out += fmt::format(" {:>12} | {:>13} us | {:>13} us\n", fixed(t.bandwidth_Bps / 1e9, 0),
                       fixed(t.dispatch_time_s * 1e6, 1), fixed(t.combine_time_s * 1e6, 1));
  }
  out += " a lower bound: no protocol overhead, no state sync, no (rank, token, topk_id) triples\n";
  return out;
}

Json to_json(const EpComm& c) {
  const EpCommOptions& o = c.options;
  Json j;
  j["source"] = kSource;
  j["config"] = {{"tokens", o.tokens}, {"top_k", o.top_k}, {"d_model", o.d_model}, {"bytes", o.bytes}};
  j["per_token_bytes"] = c.per_token_bytes;
  j["dispatch_bytes"] = c.dispatch_bytes;
  j["combine_bytes"] = c.combine_bytes;
  j["total_bytes"] = c.total_bytes;
  j["activation_bytes"] = c.activation_bytes;
  j["ratio_to_activation"] = c.ratio_to_activation;
  Json times = Json::array();
  for (const EpCommTime& t : c.times) {
    times.push_back({{"bandwidth_Bps", t.bandwidth_Bps}, {"dispatch_time_s", t.dispatch_time_s},
                     {"combine_time_s", t.combine_time_s}});
  }
  j["times"] = times;
  j["formulas"] = {{"per_token", kPerToken}, {"total", kTotal}, {"activation", kActivation},
                   {"time", kTime}};
  return j;
}

}  // namespace epsim::ledgers
