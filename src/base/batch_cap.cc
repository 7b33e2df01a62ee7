#include "base/batch_cap.h"

namespace gshare {

std::optional<BatchCap> ParseBatchCap(std::string_view name) {
  if (name == "auto") return BatchCap::kAuto;
  if (name == "never") return BatchCap::kNever;
  if (name == "beside_service") return BatchCap::kBesideService;
  if (name == "always") return BatchCap::kAlways;
  return std::nullopt;
}

std::string_view BatchCapName(BatchCap cap) {
  switch (cap) {
    case BatchCap::kAuto: return "auto";
    case BatchCap::kNever: return "never";
    case BatchCap::kBesideService: return "beside_service";
    case BatchCap::kAlways: return "always";
  }
  return "never";
}

}  // namespace gshare
