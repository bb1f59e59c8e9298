// The CSV files of the traces (openb node and pod lists, Philly jobs): no quoting, a
// header line naming the columns, errors that name "FILE:LINE: column X: ...".
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "api/status.h"

namespace phalanx::replay {

// Fields of one CSV line split at every ',' (no quoting: the openb and Philly traces have
// none); a trailing '\r' is dropped.
std::vector<std::string> SplitCsv(const std::string& line);

// A CSV file read whole: column index by header name, the data rows (empty lines skipped)
// and each row's line number in the file (the header is line 1).
struct Csv {
  std::map<std::string, size_t> col;
  std::vector<std::vector<std::string>> rows;
  std::vector<int> line_no;
};

// Reads `path`; the `required` columns must be in the header. Errors: "FILE: cannot read
// file", "FILE: empty file", "FILE:1: missing column \"X\"", "FILE:LINE: expected N
// columns, got M".
api::Status ReadCsv(const std::string& path, const std::vector<std::string>& required, Csv* csv);

// Data row `i` of `csv` read from `path`.
struct CsvRow {
  const Csv& csv;
  size_t i;
  const std::string& path;

  // The field of column `col` (a column the header has).
  const std::string& Get(const std::string& col) const;
  // "FILE:LINE: column COL: ", the prefix of an error about this field.
  std::string Where(const std::string& col) const;
  // A non-negative integer; an empty field gives -1 when `allow_empty`. Error: "FILE:LINE:
  // column COL: invalid value \"...\"".
  api::Status Int(const std::string& col, int64_t* v, bool allow_empty) const;
};

}  // namespace phalanx::replay
