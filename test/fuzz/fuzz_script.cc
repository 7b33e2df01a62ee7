// libFuzzer target: a batch script's #GSHARE lines as `gshare submit --script` reads them
// (ParseScriptOptions: ParseScriptDirectives, then CLI11), resolved into a job record
// (ResolveJobOptions: durations, --time, --begin, dependencies, sizes of the config's defaults).
#include <cstddef>
#include <cstdint>
#include <string>

#include "cli/job_options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string script(reinterpret_cast<const char*>(data), size);
  gshare::Result<gshare::JobOptions> opt = gshare::ParseScriptOptions(script, "job.sh");
  if (!opt.ok()) return 0;
  const gshare::Config config;
  (void)gshare::ResolveJobOptions(opt.value(), {"true"}, config, 1'790'000'000.0);
  return 0;
}
