#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli/job_status_text.h"

namespace gshare::unit_job_command_text {
namespace {

using json = nlohmann::json;

TEST_CASE("the COMMAND column names a Slurm step whose command is hidden") {
  CHECK(JobCommandText(json{{"argv", {"python3", "train.py"}}}) == "python3 train.py");
  CHECK(JobCommandText(json{{"argv", json::array()}}).empty());
  CHECK(JobCommandText(json{{"argv", json::array()}, {"slurm_job_id", 12}, {"slurm_step", "0"}}) ==
        "slurm step 12.0");
  CHECK(JobCommandText(json{
            {"argv", {"slurm step 12.batch"}}, {"slurm_job_id", 12}, {"slurm_step", "batch"}}) ==
        "slurm step 12.batch");
  CHECK(JobCommandText(json{{"argv", json::array()}, {"slurm_job_id", nullptr}}).empty());
  CHECK(JobCommandText(json{{"argv", {"a\x1b[2Jb"}}}).find('\x1b') == std::string::npos);
}

}  // namespace
}  // namespace gshare::unit_job_command_text
