// `epsim bounds --json` carries every figure of the text output: each number
// printed in the text must be a JSON number (in SI units, scaled to the
// printed unit and rounded to the printed precision) or appear in a JSON
// formula/provenance string.
#include <catch2/catch.hpp>

#include <array>
#include <cctype>
#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace {
struct Run {
  int exit_code = -1;
  std::string out;
};

Run run_epsim(const std::string& args) {
  Run r;
  std::string command = std::string(EPSIM_EXE) + " " + args + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.out.append(buffer.data(), n);
  int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

void collect(const nlohmann::json& j, std::vector<double>& numbers, std::vector<std::string>& strings) {
  if (j.is_number()) numbers.push_back(j.get<double>());
  if (j.is_string()) strings.push_back(j.get<std::string>());
  if (j.is_structured()) {
    for (const auto& item : j) collect(item, numbers, strings);
  }
}

// A number token of the text with the precision it was printed at.
struct Token {
  std::string text;  // without thousands commas
  int decimals = 0;
  bool scientific = false;
};

// Numbers that stand alone: digits glued to a letter ("fp8", "EP128", "int64") are names.
std::vector<Token> number_tokens(const std::string& text) {
  std::vector<Token> tokens;
  std::regex number(R"(\d[\d,]*(\.\d+)?(e[+-]\d+)?)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), number); it != std::sregex_iterator(); ++it) {
    std::size_t at = static_cast<std::size_t>(it->position());
    if (at > 0 && (std::isalpha(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_' ||
                   text[at - 1] == '.')) {
      continue;
    }
    std::string t = it->str();
    while (!t.empty() && t.back() == ',') t.pop_back();  // a list comma, not a digit group
    Token tok;
    for (char c : t) {
      if (c != ',') tok.text += c;
    }
    tok.scientific = tok.text.find('e') != std::string::npos;
    std::size_t dot = tok.text.find('.');
    std::size_t end = tok.scientific ? tok.text.find('e') : tok.text.size();
    tok.decimals = dot == std::string::npos ? 0 : static_cast<int>(end - dot - 1);
    tokens.push_back(tok);
  }
  return tokens;
}

bool in_json(const Token& t, const std::vector<double>& numbers, const std::vector<std::string>& strings) {
  // SI value -> printed unit: GB, MB, TFLOP, us, ms, %, 1024-based KB..TB.
  static const double kScales[] = {1.0,  1e-3, 1e-6, 1e-9, 1e-12, 1e3, 1e6, 100.0,
                                   1.0 / 1024, 1.0 / (1024.0 * 1024), 1.0 / (1024.0 * 1024 * 1024),
                                   1.0 / (1024.0 * 1024 * 1024 * 1024)};
  for (double v : numbers) {
    for (double s : kScales) {
      std::string printed = t.scientific ? fmt::format("{:.{}e}", v * s, t.decimals)
                                         : fmt::format("{:.{}f}", v * s, t.decimals);
      if (printed == t.text) return true;
    }
  }
  std::regex whole("(^|[^0-9.])" + std::regex_replace(t.text, std::regex(R"([.+])"), R"(\$&)") + "([^0-9]|$)");
  for (const std::string& s : strings) {
    if (std::regex_search(s, whole)) return true;
  }
  return false;
}

void check_json_covers_text(const std::string& args) {
  Run text = run_epsim(args);
  Run json = run_epsim(args + " --json");
  REQUIRE(text.exit_code == 0);
  REQUIRE(json.exit_code == 0);
  nlohmann::json j = nlohmann::json::parse(json.out);
  std::vector<double> numbers;
  std::vector<std::string> strings;
  collect(j, numbers, strings);
  std::vector<Token> tokens = number_tokens(text.out);
  CHECK(tokens.size() > 20);
  for (const Token& t : tokens) {
    INFO("epsim " << args << ": text figure " << t.text << " not in the JSON");
    CHECK(in_json(t, numbers, strings));
  }
}
}  // namespace

TEST_CASE("bounds cli: --json carries every figure of the text", "[bounds][cli]") {
  for (const char* args : {"bounds", "bounds train-step --tokens 8192 --topk 8 --experts 128 --ffn 1408",
                           "bounds comm --layers 61 --bf16-dispatch", "bounds comm --hidden 4096 --topk 8",
                           "bounds step-budget --layers 80 --hidden 8192 --ffn 28672 --params 70e9 --world 64",
                           "bounds ep-comm --tokens 4096 --top-k 6 --d-model 5120 --bytes 1"}) {
    check_json_covers_text(args);
  }
}

TEST_CASE("bounds cli: every subcommand runs and prints its seed", "[bounds][cli]") {
  struct Case { const char* args; const char* seed; };
  for (Case c : {Case{"bounds train-step", "seed 000"}, Case{"bounds comm", "seed 001"},
                 Case{"bounds step-budget", "seed 002"}, Case{"bounds ep-comm", "seed 003"}}) {
    Run r = run_epsim(c.args);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find(c.seed) != std::string::npos);
  }
  Run all = run_epsim("bounds");
  for (const char* seed : {"seed 000", "seed 001", "seed 002", "seed 003"}) {
    CHECK(all.out.find(seed) != std::string::npos);
  }
}
