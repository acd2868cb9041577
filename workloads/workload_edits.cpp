// Setting typed edits in a workload document, each with the source its errors name.
#include "workloads/workload_edits.hpp"

#include <fmt/format.h>

#include "workloads/memory_fit.hpp"

namespace epsim::workloads {

namespace {

// The text a value has in the `--set` an edit equals, for its errors' source.
std::string value_text(std::int64_t v) { return std::to_string(v); }
std::string value_text(int v) { return std::to_string(v); }
std::string value_text(bool v) { return v ? "true" : "false"; }
std::string value_text(const std::string& v) { return "\"" + v + "\""; }

class Applier {
 public:
  explicit Applier(toml::table& root) : root_(root) {}

  // Sets section.key to `node`; `text` is the value as the equal --set writes it.
  template <class Node>
  void set(const char* section, const char* key, Node node, const std::string& text, const std::string& option) {
    toml::node* table = root_.get(section);
    if (!table) table = &root_.insert(section, toml::table{}).first->second;
    if (!table->is_table()) return;  // the reader refuses "expected a table" at the file's value
    toml::node* value = &table->as_table()->insert_or_assign(key, std::move(node)).first->second;
    const std::string source = fmt::format("--set {}.{}={}", section, key, text);
    out_.sources[value] = SourceLocation{source};
    if (!option.empty()) out_.option_of[source] = option;
  }

  template <class T>
  void number(const char* section, const char* key, const std::optional<Edit<T>>& e) {
    if (e) set(section, key, toml::value<std::int64_t>(static_cast<std::int64_t>(e->value)), value_text(e->value),
               e->option);
  }
  void boolean(const char* section, const char* key, const std::optional<Edit<bool>>& e) {
    if (e) set(section, key, toml::value<bool>(e->value), value_text(e->value), e->option);
  }
  template <class E>
  void name(const char* section, const char* key, const std::optional<Edit<E>>& e) {
    if (!e) return;
    const std::string n = to_string(e->value);
    set(section, key, toml::value<std::string>(n), value_text(n), e->option);
  }

  AppliedEdits take() { return std::move(out_); }

 private:
  toml::table& root_;
  AppliedEdits out_;
};

}  // namespace

AppliedEdits apply_edits(toml::table& root, const WorkloadEdits& e) {
  Applier a(root);
  // Read before model.layers is set: the dense layers the document gives.
  if (e.moe_layers) {
    const std::int64_t dense = root["model"]["dense_layers"].value<std::int64_t>().value_or(0);
    a.number("model", "layers", std::optional<Edit<std::int64_t>>(Edit<std::int64_t>{dense + e.moe_layers->value,
                                                                                     e.moe_layers->option}));
  }
  a.number("model", "hidden", e.hidden);
  a.number("model", "experts", e.experts);
  a.number("model", "top_k", e.top_k);
  a.number("parallel", "tp", e.tp);
  a.number("parallel", "pp", e.pp);
  a.number("parallel", "vpp", e.vpp);
  a.number("parallel", "ep", e.ep);
  a.number("parallel", "etp", e.etp);
  a.number("parallel", "dp", e.dp);
  a.number("parallel", "ranks_per_node", e.ranks_per_node);
  a.number("parallel", "micro_batch", e.micro_batch);
  a.number("parallel", "micro_batches", e.micro_batches);
  a.number("parallel", "global_batch", e.global_batch);
  a.number("parallel", "sequence_length", e.sequence_length);
  a.name("parallel", "schedule", e.schedule);
  a.name("memory", "recompute", e.recompute);
  a.number("memory", "zero_stage", e.zero_stage);
  a.boolean("memory", "allow_oversubscribed", e.allow_oversubscribed);
  a.name("routing", "kind", e.routing_kind);
  a.number("routing", "seed", e.seed);
  a.number("routing", "redundant_experts", e.redundant_experts);
  return a.take();
}

InputError at_option(const InputError& error, const AppliedEdits& applied) {
  const auto it = applied.option_of.find(error.where().file);
  if (it == applied.option_of.end()) return error;
  return option_error(it->second, error.key() + ": " + error.problem());
}

}  // namespace epsim::workloads
