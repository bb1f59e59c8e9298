#include "framework/status.h"

namespace phalanx::framework {

std::string_view CodeName(Code c) {
  switch (c) {
    case Code::kSuccess: return "Success";
    case Code::kError: return "Error";
    case Code::kUnschedulable: return "Unschedulable";
    case Code::kUnschedulableAndUnresolvable: return "UnschedulableAndUnresolvable";
    case Code::kWait: return "Wait";
    case Code::kSkip: return "Skip";
    case Code::kPending: return "Pending";
  }
  return "Unknown";
}

std::string Status::Message() const {
  std::string out;
  for (size_t i = 0; i < reasons_.size(); ++i) {
    if (i) out += ", ";
    out += reasons_[i];
  }
  return out;
}

std::string Status::ToString() const {
  std::string out(CodeName(code_));
  if (!plugin_.empty()) out += " (" + plugin_ + ")";
  if (!reasons_.empty()) out += ": " + Message();
  return out;
}

}  // namespace phalanx::framework
