#include "replay/csv.h"

#include <charconv>
#include <fstream>

namespace phalanx::replay {

namespace {

bool ParseInt(const std::string& s, int64_t* v) {
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace

std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : line) {
    if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur.push_back(c);
    }
  }
  out.push_back(cur);
  return out;
}

api::Status ReadCsv(const std::string& path, const std::vector<std::string>& required, Csv* csv) {
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(path + ": cannot read file");
  std::string line;
  if (!std::getline(in, line)) return absl::InvalidArgumentError(path + ": empty file");
  auto header = SplitCsv(line);
  for (size_t i = 0; i < header.size(); ++i) csv->col[header[i]] = i;
  for (const auto& r : required) {
    if (!csv->col.count(r)) {
      return absl::InvalidArgumentError(path + ":1: missing column \"" + r + "\"");
    }
  }
  int n = 1;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line == "\r") continue;
    auto f = SplitCsv(line);
    if (f.size() != header.size()) {
      return absl::InvalidArgumentError(path + ":" + std::to_string(n) + ": expected " +
                                        std::to_string(header.size()) + " columns, got " +
                                        std::to_string(f.size()));
    }
    csv->rows.push_back(std::move(f));
    csv->line_no.push_back(n);
  }
  return absl::OkStatus();
}

const std::string& CsvRow::Get(const std::string& col) const {
  return csv.rows[i][csv.col.at(col)];
}

std::string CsvRow::Where(const std::string& col) const {
  return path + ":" + std::to_string(csv.line_no[i]) + ": column " + col + ": ";
}

api::Status CsvRow::Int(const std::string& col, int64_t* v, bool allow_empty) const {
  const std::string& s = Get(col);
  if (s.empty() && allow_empty) {
    *v = -1;
    return absl::OkStatus();
  }
  if (!ParseInt(s, v) || *v < 0) {
    return absl::InvalidArgumentError(Where(col) + "invalid value \"" + s + "\"");
  }
  return absl::OkStatus();
}

}  // namespace phalanx::replay
