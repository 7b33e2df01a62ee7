// Shared by the admission tests: which jobs a result starts and why the others wait.
// Test threads only.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "policy/admission.h"

namespace gshare::admission_test {

// The ids `r` starts, in order.
inline std::vector<int64_t> Started(const std::vector<AdmissionJob>& pending,
                                    const AdmissionResult& r) {
  std::vector<int64_t> ids;
  for (const auto& s : r.start) ids.push_back(pending[s.index].id);
  return ids;
}

// The reason of the job with `id`, "" when it starts.
inline std::string Reason(const std::vector<AdmissionJob>& pending, const AdmissionResult& r,
                          int64_t id) {
  for (size_t i = 0; i < pending.size(); ++i) {
    if (pending[i].id == id) return r.reasons[i] == nullptr ? "" : r.reasons[i];
  }
  FAIL("no job ", id);
  return "";
}

}  // namespace gshare::admission_test
