// JobRecord -> JSON.
#include "job_json.h"

namespace gshare {
namespace {
template <typename T>
nlohmann::json OrNull(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
}  // namespace

nlohmann::json JobToJson(const JobRecord& r) {
  return {{"id", r.id},
          {"name", r.name},
          {"state", r.state},
          {"reason", r.reason},
          {"priority", r.priority},
          {"argv", r.argv},
          {"cwd", r.cwd},
          {"uid", r.uid},
          {"gpu", r.gpu},
          {"quantum_ms", r.quantum_ms},
          {"kind", r.kind},
          {"submit_time", r.submit_time},
          {"start_time", OrNull(r.start_time)},
          {"end_time", OrNull(r.end_time)},
          {"exit_code", OrNull(r.exit_code)},
          {"signal", OrNull(r.signal)},
          {"pid", OrNull(r.pid)},
          {"lease_seconds", r.lease_seconds},
          {"wait_seconds", r.wait_seconds},
          {"peak_bytes", r.peak_bytes}};
}

}  // namespace gshare
