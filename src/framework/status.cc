#include "framework/status.h"

#include <algorithm>

namespace phalanx::framework {

std::string_view CodeName(Code c) {
  switch (c) {
    case Code::kSuccess:
      return "Success";
    case Code::kError:
      return "Error";
    case Code::kUnschedulable:
      return "Unschedulable";
    case Code::kUnschedulableAndUnresolvable:
      return "UnschedulableAndUnresolvable";
    case Code::kWait:
      return "Wait";
    case Code::kSkip:
      return "Skip";
    case Code::kPending:
      return "Pending";
  }
  return "Unknown";
}

Status::Rep& Status::Mutable() {
  if (!rep_) {
    rep_ = std::make_shared<Rep>();
  } else if (rep_.use_count() > 1) {
    rep_ = std::make_shared<Rep>(*rep_);
  }
  return *rep_;
}

const std::vector<std::string>& Status::EmptyReasons() {
  static const std::vector<std::string> empty;
  return empty;
}

const std::string& Status::EmptyString() {
  static const std::string empty;
  return empty;
}

std::string Status::Message() const {
  const auto& rs = reasons();
  if (rs.size() == 1) return rs[0];
  std::string out;
  for (size_t i = 0; i < rs.size(); ++i) {
    if (i) out += ", ";
    out += rs[i];
  }
  return out;
}

std::string Status::ToString() const {
  std::string out(CodeName(code_));
  if (!plugin().empty()) out += " (" + plugin() + ")";
  if (!reasons().empty()) out += ": " + Message();
  return out;
}

std::string NodesAvailableMessage(size_t num_all_nodes,
                                  const std::map<std::string, size_t>& node_reasons) {
  std::string msg = "0/" + std::to_string(num_all_nodes) + " nodes are available:";
  std::vector<std::string> parts;
  parts.reserve(node_reasons.size());
  for (const auto& [r, n] : node_reasons) parts.push_back(std::to_string(n) + " " + r);
  std::sort(parts.begin(), parts.end());
  if (!parts.empty()) {
    msg += " ";
    for (size_t i = 0; i < parts.size(); ++i) msg += (i ? ", " : "") + parts[i];
    msg += ".";
  }
  return msg;
}

}  // namespace phalanx::framework
