// CSV reader for measured per-layer expert loads.
#include "workloads/routing_trace.hpp"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include <fmt/format.h>

#include "core/input_file.hpp"

namespace epsim::workloads {

namespace {

struct Field {
  std::string text;
  int column = 1;  // 1-based character column of the field's start
};

std::vector<Field> split_csv_line(const std::string& line) {
  std::vector<Field> fields;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = line.find(',', start);
    std::string raw = line.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    std::size_t first = raw.find_first_not_of(" \t");
    std::size_t last = raw.find_last_not_of(" \t\r");
    Field f;
    f.column = static_cast<int>(start + (first == std::string::npos ? 0 : first)) + 1;
    f.text = first == std::string::npos ? "" : raw.substr(first, last - first + 1);
    fields.push_back(f);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return fields;
}

bool is_blank(const std::string& line) {
  return line.find_first_not_of(" \t\r") == std::string::npos;
}

}  // namespace

RoutingTrace read_routing_trace(const std::string& path, const ModelSpec& model,
                                const std::string& key, const SourceLocation& key_where) {
  std::string text;
  try {
    text = read_input_file(path);
  } catch (const FileError& e) {
    throw named_at(e, key_where, key);
  }
  std::istringstream in(text);

  RoutingTrace trace;
  trace.path = path;
  trace.tokens.assign(static_cast<std::size_t>(model.moe_layers()),
                      std::vector<double>(static_cast<std::size_t>(model.experts), 0.0));
  std::vector<std::vector<bool>> seen(trace.tokens.size(),
                                      std::vector<bool>(static_cast<std::size_t>(model.experts), false));

  std::string line;
  int row = 0;
  while (std::getline(in, line)) {
    ++row;
    if (is_blank(line) || line[line.find_first_not_of(" \t")] == '#') continue;
    std::vector<Field> fields = split_csv_line(line);
    auto fail = [&](const Field& f, const std::string& problem) {
      throw InputError(SourceLocation{path, row, f.column}, key, problem);
    };
    if (row == 1 && fields.size() == 3 && fields[0].text == "layer" && fields[1].text == "expert" &&
        fields[2].text == "tokens") {
      continue;
    }
    if (fields.size() != 3) {
      fail(fields[0], fmt::format("expected 3 fields \"layer,expert,tokens\", got {}", fields.size()));
    }
    auto integer = [&](const Field& f, const char* what) {
      char* end = nullptr;
      long long v = std::strtoll(f.text.c_str(), &end, 10);
      if (f.text.empty() || *end != '\0') fail(f, fmt::format("{}: expected an integer, got \"{}\"", what, f.text));
      return v;
    };
    long long layer = integer(fields[0], "layer");
    long long expert = integer(fields[1], "expert");
    char* end = nullptr;
    double tokens = std::strtod(fields[2].text.c_str(), &end);
    if (fields[2].text.empty() || *end != '\0' || !std::isfinite(tokens)) {
      fail(fields[2], fmt::format("tokens: expected a number, got \"{}\"", fields[2].text));
    }
    if (layer < model.dense_layers || layer >= model.layers) {
      fail(fields[0], fmt::format("layer {} is not a MoE layer of the model (MoE layers are {}..{})", layer,
                                  model.dense_layers, model.layers - 1));
    }
    if (expert < 0 || expert >= model.experts) {
      fail(fields[1], fmt::format("expert {} out of range [0, {})", expert, model.experts));
    }
    if (tokens < 0) fail(fields[2], fmt::format("tokens: expected a count >= 0, got {}", fields[2].text));
    auto l = static_cast<std::size_t>(layer - model.dense_layers);
    auto e = static_cast<std::size_t>(expert);
    if (seen[l][e]) fail(fields[0], fmt::format("layer {} expert {} appears twice", layer, expert));
    seen[l][e] = true;
    trace.tokens[l][e] = tokens;
  }
  for (std::size_t l = 0; l < trace.tokens.size(); ++l) {
    double total = 0;
    for (double t : trace.tokens[l]) total += t;
    if (total <= 0) {
      throw InputError(SourceLocation{path}, key,
                       fmt::format("no positive load for MoE layer {}: every MoE layer needs rows",
                                   static_cast<int>(l) + model.dense_layers));
    }
  }
  return trace;
}

}  // namespace epsim::workloads
