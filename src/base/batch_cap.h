// [mps] batch_cap by name: when a batch MPS client is held to batch_thread_percentage of the
// GPU's threads (policy/mps_choice.h has the rule, its reasons and ResolveBatchCap). Pure; any
// thread.
#pragma once

#include <optional>
#include <string_view>

namespace gshare {

enum class BatchCap {
  kAuto,           // "auto" (the default): kNever where the driver has green contexts, else
                   // kBesideService (ResolveBatchCap)
  kNever,          // "never": no cap; the SM partition protects the service
  kBesideService,  // "beside_service": a batch job that starts while a client above batch
                   // priority (a service) runs on its GPU
  kAlways,         // "always": every batch client (a GPU kept for a service that may come)
};

// The value of [mps] batch_cap named `name`; nullopt for any other string.
std::optional<BatchCap> ParseBatchCap(std::string_view name);

// The name ParseBatchCap reads for `cap`.
std::string_view BatchCapName(BatchCap cap);

}  // namespace gshare
