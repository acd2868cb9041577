// Reading a software stack and merging a platform's overrides over it.
#include "topology/stack_spec.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>

#include <fmt/format.h>

#include "core/input_file.hpp"
#include "core/physical_ranges.hpp"
#include "core/presets.hpp"
#include "core/toml_base.hpp"
#include "core/toml_reader.hpp"
#include "core/units.hpp"

namespace epsim::topology {

std::optional<double> read_compute_share(TableReader& t, std::string_view key) {
  const toml::node* n = t.node(key);
  if (!n) return std::nullopt;
  if (!n->is_number()) t.number(key, 0, kCommComputeShareLimit);  // fails with the type found
  const double v = n->is_integer() ? static_cast<double>(*n->value<std::int64_t>()) : *n->value<double>();
  if (!(v >= 0 && v < kCommComputeShareLimit))
    t.fail(key, fmt::format("expected a number in [0, {:g}), got {:g}", kCommComputeShareLimit, v));
  return v;
}

double read_efficiency_share(TableReader& t, std::string_view key, const char* what) {
  const toml::node* n = t.node(key);
  if (!n) return 1;
  if (!n->is_number()) t.number(key, 0, 1);  // fails with the type found
  const double v = n->is_integer() ? static_cast<double>(*n->value<std::int64_t>()) : *n->value<double>();
  if (!physical_range_problem(Physical::kEfficiency, v).empty())
    t.fail(key, fmt::format("expected {} in {}, got {:g}", what, describe_range(Physical::kEfficiency), v));
  return v;
}

namespace {

// A framework or kernel time; absent or written as zero ("0us": a table of
// device times, no host or launch cost) it is none.
double seconds_or_zero(TableReader& t, std::string_view key) {
  if (!t.has(key)) return 0.0;
  const toml::node* n = t.node(key);
  if (const auto text = n->value<std::string>()) {
    try {
      if (parse_quantity(*text, Quantity::kTime) == 0.0) return 0.0;
    } catch (const std::exception&) {  // the reader below says what is wrong, at the key
    }
  }
  return t.quantity(key, Quantity::kTime);
}

GemmEfficiency read_gemm(TableReader t, bool grouped) {
  GemmEfficiency e;
  e.max = read_efficiency_share(t, "max", "a share of the peak");
  e.half_rows = t.number_or("half_rows", 0, 0, 1e9);
  e.half_n = t.number_or("half_n", 0, 0, 1e9);
  e.half_k = t.number_or("half_k", 0, 0, 1e9);
  if (grouped) {
    e.per_expert_launch = t.choice_or("launch", "one", {"one", "per_expert"}) == "per_expert";
    if (t.has("memory")) e.memory = read_efficiency_share(t, "memory", "a share of the HBM bandwidth");
  }
  t.finish();
  return e;
}

AttentionEfficiency read_attention(TableReader t) {
  AttentionEfficiency e;
  e.max = read_efficiency_share(t, "max", "a share of the BF16 peak");
  e.half_dim = t.number_or("half_dim", 0, 0, 1e6);
  e.half_context = t.number_or("half_context", 0, 0, 1e9);
  t.finish();
  return e;
}

// A GEMM table by dtype: [gemm.bf16], [gemm.fp8] (FP8 defaults to BF16's
// shape factors at its own max), and the kernel's fixed time (`fixed`).
void read_gemm_dtypes(TableReader& root, const char* key, GemmEfficiency& bf16, GemmEfficiency& fp8,
                      double& fixed_s) {
  std::optional<TableReader> t = root.optional_table(key);
  if (!t) return;
  fixed_s = seconds_or_zero(*t, "fixed");
  const bool grouped = std::string_view(key) == "grouped_gemm";
  if (auto b = t->optional_table("bf16")) bf16 = read_gemm(*b, grouped);
  fp8 = bf16;
  if (auto f = t->optional_table("fp8")) fp8 = read_gemm(*f, grouped);
  t->finish();
}

void read_memory(std::optional<TableReader> t, std::array<double, kMemoryClasses>& shares, int first) {
  if (!t) return;
  for (int c = first; c < kMemoryClasses; ++c)
    shares[static_cast<std::size_t>(c)] =
        read_efficiency_share(*t, kMemoryClassNames[static_cast<std::size_t>(c)], "a share of the HBM bandwidth");
  t->finish();
}

// Copies every key of `from` into `into` (tables merged key by key), but
// `skip` at the top, recording where each copied value came from (toml++
// keeps no source on a copy) so that errors still point at the platform
// file's line or the --set that gave it. (core/toml_base's overlay moves
// nodes instead; the platform's tree is read-only here.)
void merge(toml::table& into, const toml::table& from, std::string_view skip, NodeSources& sources) {
  for (const auto& [key, node] : from) {
    if (key.str() == skip) continue;
    if (const toml::table* sub = node.as_table()) {
      toml::node* existing = into.get(key.str());
      if (existing && existing->is_table()) {
        merge(*existing->as_table(), *sub, "", sources);
        continue;
      }
    }
    into.insert_or_assign(key.str(), node);
    std::function<void(const toml::node&, const toml::node&)> record = [&](const toml::node& copy,
                                                                          const toml::node& original) {
      sources[&copy] = location_of(original);
      if (copy.is_table())
        for (const auto& [k, child] : *copy.as_table()) record(child, *original.as_table()->get(k.str()));
    };
    record(*into.get(key.str()), node);
  }
}

}  // namespace

StackSpec read_stack(const toml::table& root_table, const std::string& source, const NodeSources* sources) {
  TableReader root(root_table, "stack", sources);  // its keys named as a platform's [stack] and --set stack.<key> set them
  StackSpec s;
  s.source = source;
  const std::int64_t schema = root.integer("schema", 1);
  if (schema != 1) root.fail("schema", fmt::format("unsupported schema version {} (this epsim reads 1)", schema));
  s.name = root.string("name");
  root.string_or("source", "");  // where its figures come from: documentation, not read
  if (const toml::node* n = root.node("npus")) {
    const toml::array* a = n->as_array();
    if (!a) root.fail("npus", "expected an array of NPU model names (npu.model)");
    for (const toml::node& e : *a) {
      if (!e.is_string()) root.fail("npus", "expected an array of NPU model names (npu.model)");
      s.npus.push_back(*e.value<std::string>());
    }
  }
  read_gemm_dtypes(root, "gemm", s.gemm_bf16, s.gemm_fp8, s.gemm_fixed_s);
  read_gemm_dtypes(root, "grouped_gemm", s.grouped_bf16, s.grouped_fp8, s.grouped_fixed_s);
  if (auto t = root.optional_table("attention")) s.attention = read_attention(*t);
  s.attention_backward = s.attention;
  if (auto t = root.optional_table("attention_backward")) s.attention_backward = read_attention(*t);
  if (auto t = root.optional_table("decode_attention")) {
    s.decode_attention_memory = read_efficiency_share(*t, "memory", "a share of the HBM bandwidth");
    s.decode_attention = read_attention(*t);
  }
  if (auto t = root.optional_table("memory")) {
    s.gemm_memory = read_efficiency_share(*t, "gemm", "a share of the HBM bandwidth");
    read_memory(t, s.memory, 0);
  }
  s.memory_backward = s.memory;
  read_memory(root.optional_table("memory_backward"), s.memory_backward, 0);
  if (auto t = root.optional_table("framework")) {
    s.launch_s = seconds_or_zero(*t, "launch");
    s.host_per_kernel_s = seconds_or_zero(*t, "host_per_kernel");
    s.host_per_fp8_gemm_s = seconds_or_zero(*t, "host_per_fp8_gemm");
    s.moe_host_sync_s = seconds_or_zero(*t, "moe_host_sync");
    s.fused_swiglu = t->boolean_or("fused_swiglu", false);
    s.fused_router = t->boolean_or("fused_router", false);
    s.fp8_cast_bytes = t->number_or("fp8_cast_bytes", 0, 0, 16);
    t->finish();
  }
  if (auto t = root.optional_table("tables")) {
    if (const toml::node* files = t->node("compute")) {
      const toml::array* a = files->as_array();
      if (!a || a->empty()) t->fail("compute", "expected an array of compute measurement files");
      for (const toml::node& f : *a) {
        if (!f.is_string()) t->fail("compute", "expected an array of compute measurement files");
        // Relative to the file that names it (a stack file, a platform's [stack]).
        std::filesystem::path path(*f.value<std::string>());
        const SourceLocation at = t->location("compute");
        if (path.is_relative() && !at.file.empty() && std::filesystem::is_regular_file(at.file))
          path = std::filesystem::path(at.file).parent_path() / path;
        s.measured_files.push_back(path.lexically_normal().string());
        s.measured_at.push_back(at);
      }
    }
    t->finish();
  }
  if (auto t = root.optional_table("collectives")) {
    s.collective_launch_s = seconds_or_zero(*t, "launch");
    s.collective_peer_s = seconds_or_zero(*t, "peer_cost");
    t->finish();
  }
  if (auto t = root.optional_table("dispatch")) {
    const std::vector<std::string> names(kDispatchKernelNames.begin(), kDispatchKernelNames.end());
    const std::string kernel = t->choice("kernel", names);
    s.dispatch = static_cast<DispatchKernel>(std::find(names.begin(), names.end(), kernel) - names.begin());
    s.comm_compute_share = read_compute_share(*t, "compute_share");
    t->finish();
  }
  root.finish();
  return s;
}

bool issues_from_host(const StackSpec& stack) {
  return stack.host_per_kernel_s > 0 || stack.host_per_fp8_gemm_s > 0 || stack.moe_host_sync_s > 0;
}

std::vector<std::string> stacks_without_host_time(const std::string& npu_model) {
  std::vector<std::string> out;
  for (const std::string& name : preset_names(PresetKind::kStack)) {
    try {
      const StackSpec s = load_stack(name, nullptr, npu_model, "");
      if (!s.npus.empty() && !issues_from_host(s)) out.push_back(name);
    } catch (const InputError&) {  // no tables for this NPU
    }
  }
  return out;
}

StackSpec load_stack(const std::string& name, const toml::table* platform_stack, const std::string& npu_model,
                     const std::string& platform_source) {
  const std::string file = resolve_preset_file(PresetKind::kStack, name);
  toml::table root = load_toml_with_base(file, PresetKind::kStack);  // a stack may start from another (`base`)
  NodeSources sources;
  if (platform_stack) merge(root, *platform_stack, "name", sources);
  StackSpec s = read_stack(root, file, &sources);
  if (!s.npus.empty() && !npu_model.empty() &&
      std::find(s.npus.begin(), s.npus.end(), npu_model) == s.npus.end()) {
    const toml::node* at = platform_stack ? platform_stack->get("name") : nullptr;
    throw InputError(at ? location_of(*at) : SourceLocation{platform_source, 0, 0}, "stack.name",
                     fmt::format("stack \"{}\" has no tables for NPU \"{}\" (it has tables for {}); choose a "
                                 "stack measured on this NPU, or write one (docs/stacks.md)",
                                 s.name, npu_model, fmt::join(s.npus, ", ")));
  }
  for (std::size_t i = 0; i < s.measured_files.size(); ++i) {
    const std::string& path = s.measured_files[i];
    MeasuredTable table;
    try {
      table = load_measured_table(path);
    } catch (const FileError& e) {
      if (e.path() != path) throw;  // an error inside the table, told there
      throw named_at(e, s.measured_at[i], "stack.tables.compute");
    }
    if (!npu_model.empty() && table.npu_model != npu_model)
      throw InputError(s.measured_at[i], "stack.tables.compute",
                       fmt::format("{} was measured on \"{}\", not on this platform's \"{}\": a table is never "
                                   "borrowed for another chip",
                                   path, table.npu_model, npu_model));
    s.measured.insert(s.measured.end(), table.rows.begin(), table.rows.end());
  }
  return s;
}

}  // namespace epsim::topology
