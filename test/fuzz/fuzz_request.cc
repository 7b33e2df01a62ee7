// libFuzzer target: the JSON payloads of the CLI's requests as the daemon reads them: job
// options (kRunRegister, kSubmit: JobOptionsFromJson, src/ipc/job_json.h) and a job's end
// (kRunEnded and <state_dir>/jobs/<id>.end: JobEndFromJson, src/ipc/job_end.h); and the attach
// reply as a supervisor reads it (RunAttachReply, src/ipc/replies.h). None may throw; options
// and attach replies that are accepted must read back the same after they are written again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "ipc/job_end.h"
#include "ipc/job_json.h"
#include "ipc/replies.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // As the daemon parses a payload: no exceptions, anything but an object refused later.
  nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, false);
  if (j.is_discarded()) return 0;
  gshare::JobEnd end = gshare::JobEndFromJson(j);
  (void)gshare::FinalStateOf(end);
  (void)gshare::ToJsonText(gshare::JobEndToJson(end, 1));

  if (gshare::Result<gshare::RunAttachReply> a = gshare::RunAttachReply::Parse(j); a.ok()) {
    const std::string once = a->ToJsonText();
    gshare::Result<gshare::RunAttachReply> again =
        gshare::RunAttachReply::Parse(nlohmann::json::parse(once));
    if (!again.ok() || again->ToJsonText() != once) abort();
  }

  gshare::JobRecord r;
  if (!gshare::JobOptionsFromJson(j, &r).ok()) return 0;
  const nlohmann::json once = gshare::JobOptionsToJson(r);
  gshare::JobRecord again;
  if (!gshare::JobOptionsFromJson(once, &again).ok()) abort();
  if (gshare::JobOptionsToJson(again) != once) abort();
  (void)gshare::ToJsonText(gshare::JobToJson(again));
  return 0;
}
