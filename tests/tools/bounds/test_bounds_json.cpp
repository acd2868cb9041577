// `epsim bounds --json` carries every figure of the text output: each number
// printed in the text must be a JSON number (in SI units, scaled to the
// printed unit and rounded to the printed precision) or appear in a JSON
// formula/provenance string.
#include <catch2/catch.hpp>

#include <array>
#include <cctype>
#include <cstdio>
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

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Numbers that stand alone: digits glued to a letter ("fp8", "EP128", "int64")
// are names. A number is digits with optional thousands commas, decimals and
// an exponent ("8.659e+12"). Hand-scanned: GCC 12's <regex> trips
// -Wmaybe-uninitialized under the sanitizer build.
std::vector<Token> number_tokens(const std::string& text) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  while (i < text.size()) {
    char before = i > 0 ? text[i - 1] : ' ';
    bool glued = std::isalpha(static_cast<unsigned char>(before)) || before == '_' || before == '.';
    if (!is_digit(text[i])) {
      ++i;
      continue;
    }
    if (glued) {
      while (i < text.size() && is_digit(text[i])) ++i;  // "EP128" yields nothing
      continue;
    }
    Token tok;
    while (i < text.size() && (is_digit(text[i]) || (text[i] == ',' && i + 1 < text.size() && is_digit(text[i + 1])))) {
      if (text[i] != ',') tok.text += text[i];
      ++i;
    }
    if (i + 1 < text.size() && text[i] == '.' && is_digit(text[i + 1])) {
      tok.text += text[i++];
      while (i < text.size() && is_digit(text[i])) {
        tok.text += text[i++];
        ++tok.decimals;
      }
    }
    if (i + 2 < text.size() && text[i] == 'e' && (text[i + 1] == '+' || text[i + 1] == '-') && is_digit(text[i + 2])) {
      tok.scientific = true;
      tok.text += text.substr(i, 2);
      i += 2;
      while (i < text.size() && is_digit(text[i])) tok.text += text[i++];
    }
    tokens.push_back(tok);
  }
  return tokens;
}

// `token` occurs in `s` as a whole number (no digit or '.' glued to it).
bool contains_number(const std::string& s, const std::string& token) {
  for (std::size_t at = s.find(token); at != std::string::npos; at = s.find(token, at + 1)) {
    bool left = at == 0 || (!is_digit(s[at - 1]) && s[at - 1] != '.');
    std::size_t end = at + token.size();
    bool right = end >= s.size() || !is_digit(s[end]);
    if (left && right) return true;
  }
  return false;
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
  for (const std::string& s : strings) {
    if (contains_number(s, t.text)) return true;
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

TEST_CASE("bounds cli: the figure scanner finds numbers and rejects strangers", "[bounds][cli]") {
  std::vector<Token> tokens = number_tokens("EP128 fp8: 7,168 B, 8.659e+12 FLOP (0.518 GB / 1381 us) 27.9%");
  std::vector<std::string> texts;
  for (const Token& t : tokens) texts.push_back(t.text);
  CHECK(texts == std::vector<std::string>{"7168", "8.659e+12", "0.518", "1381", "27.9"});
  std::vector<std::string> no_strings;
  CHECK(in_json(tokens[3], {1381e-6}, no_strings));       // seconds printed as us
  CHECK_FALSE(in_json(tokens[3], {1382e-6}, no_strings));
  CHECK(in_json(tokens[2], {517870080.0}, no_strings));   // bytes printed as GB
  CHECK(in_json(tokens[0], {}, {"hidden 7168 elements"}));
  CHECK_FALSE(in_json(tokens[0], {}, {"71680"}));
}
