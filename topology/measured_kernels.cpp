// Reading measured kernels from compute files.
#include "topology/measured_kernels.hpp"

#include <fmt/format.h>

namespace epsim::topology {

const std::vector<std::string>& measured_ops() {
  static const std::vector<std::string> ops = {"gemm",   "grouped_gemm", "attention", "elementwise",
                                               "norm",   "activation",   "gather",    "scatter_add",
                                               "router", "loss",         "optimizer"};
  return ops;
}

MeasuredKernel read_measured_kernel(TableReader t) {
  MeasuredKernel r;
  r.at = t.location("name");
  r.name = t.string("name");
  r.op = t.choice("op", measured_ops());
  r.pass = t.choice_or("pass", "forward", {"forward", "forward_backward"});
  r.dtype = t.choice_or("dtype", "bf16", {"bf16", "fp8"});
  r.calibration = t.boolean_or("calibration", false);
  r.seconds = t.number("seconds", 1e-9, 1e3);
  if (r.op == "gemm" || r.op == "grouped_gemm") {
    r.m = t.number("m", 1, 1e9);
    r.n = t.number("n", 1, 1e9);
    r.k = t.number("k", 1, 1e9);
    if (r.op == "grouped_gemm") r.groups = t.number("groups", 1, 1e6);
  } else if (r.op == "attention") {
    r.heads = t.number("heads", 1, 1e5);
    r.d_qk = t.number("d_qk", 1, 1e5);
    r.d_v = t.number("d_v", 1, 1e5);
    r.seq = t.number("seq", 1, 1e8);
  } else {
    if (r.pass != "forward") t.fail("pass", "a memory-bound row is a forward kernel (pass = \"forward\")");
    r.bytes = t.number("bytes", 1, 1e15);
    if (r.op == "router" && t.has("m")) {  // the scores GEMM before the score function and top-k
      r.m = t.number("m", 1, 1e9);
      r.n = t.number("n", 1, 1e9);
      r.k = t.number("k", 1, 1e9);
    }
  }
  t.finish();
  return r;
}

std::vector<MeasuredKernel> read_measured_kernels(TableReader& root) {
  const toml::node* rows = root.node("row");
  if (!rows || !rows->is_array_of_tables() || rows->as_array()->empty())
    root.fail("row", "expected [[row]] tables, at least one");
  const toml::array& a = *rows->as_array();
  std::vector<MeasuredKernel> out;
  for (std::size_t i = 0; i < a.size(); ++i)
    out.push_back(read_measured_kernel(TableReader(*a.get(i)->as_table(), fmt::format("row[{}]", i))));
  return out;
}

std::string read_compute_header(TableReader& root) {
  const std::int64_t schema = root.integer("schema", 1);
  if (schema != 1) root.fail("schema", fmt::format("unsupported schema version {} (this epsim reads 1)", schema));
  root.choice("kind", {"compute"});
  return root.string_or("source", "");
}

MeasuredTable load_measured_table(const std::string& path) {
  const toml::table doc = load_toml_file(path);
  TableReader root(doc, "");
  MeasuredTable t;
  t.path = path;
  read_compute_header(root);
  root.string_or("platform", "");  // validate's; a stack prices on its own platform's NPU
  std::optional<TableReader> set = root.optional_table("platform_set");
  if (!set || !set->has("npu.model"))
    root.fail("platform_set", "a table a stack prices by names the NPU it was measured on: [platform_set] "
                              "\"npu.model\" = \"...\"");
  t.npu_model = set->string("npu.model");
  for (const auto& [key, value] : set->raw()) set->node(key.str());  // the others are validate's (the NPU's figures)
  set->finish();
  t.rows = read_measured_kernels(root);
  root.finish();
  return t;
}

}  // namespace epsim::topology
