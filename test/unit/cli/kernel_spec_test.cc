// Issue 23: the kernel specs of `gshare kernel`: names, Jupyter's directories, kernel.json,
// and the job name `run --kernel` takes from the notebook.
#include "cli/kernel_spec.h"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "temp_dir.h"

namespace gshare::unit_kernel_spec {
namespace {

using json = nlohmann::json;

EnvLookup Env(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST_CASE("kernel names are Jupyter's and plain directory names") {
  for (const char* good : {"gshare", "t1", "GPU-hi_2.0", "a", "..."}) {
    CHECK_MESSAGE(CheckKernelName(good).ok(), good);
  }
  for (const char* bad : {"", ".", "..", "a b", "x/y", "../t", "é", "a\nb", "tab\t"}) {
    Status s = CheckKernelName(bad);
    CHECK_MESSAGE(!s.ok(), bad);
    CHECK(s.message().find('\n') == std::string::npos);
  }
  CHECK_FALSE(CheckKernelName(std::string(256, 'k')).ok());
  CHECK(CheckKernelName(std::string(255, 'k')).ok());
}

TEST_CASE("the user's kernels follow Jupyter's rules on Linux") {
  CHECK(
      UserKernelsDir(Env({{"JUPYTER_DATA_DIR", "/j"}, {"XDG_DATA_HOME", "/x"}, {"HOME", "/h"}})) ==
      "/j/kernels");
  CHECK(UserKernelsDir(Env({{"JUPYTER_DATA_DIR", ""}, {"XDG_DATA_HOME", "/x"}, {"HOME", "/h"}})) ==
        "/x/jupyter/kernels");
  CHECK(UserKernelsDir(Env({{"XDG_DATA_HOME", ""}, {"HOME", "/h"}})) ==
        "/h/.local/share/jupyter/kernels");
  CHECK(PrefixKernelsDir("/opt/venv/") == "/opt/venv/share/jupyter/kernels");
}

TEST_CASE("kernel list searches Jupyter's directories in its order, each once") {
  auto dirs = KernelSearchDirs(Env({{"JUPYTER_PATH", "/p1::/p2/"}, {"HOME", "/h"}}), "/usr");
  CHECK(dirs ==
        std::vector<std::string>{"/p1/kernels", "/p2/kernels", "/h/.local/share/jupyter/kernels",
                                 "/usr/share/jupyter/kernels", "/usr/local/share/jupyter/kernels"});
  dirs = KernelSearchDirs(Env({{"HOME", "/h"}}), "");
  CHECK(dirs.size() == 3);
}

TEST_CASE("kernel.json starts the kernel under gshare run --kernel") {
  KernelSpecArgs args;
  args.gshare = "/usr/bin/gshare";
  args.name = "t1";
  args.options = {"--priority=5", "--env=A=1"};
  args.python = "/usr/bin/python3";
  json spec = KernelSpecJson(args);
  CHECK(spec["argv"] ==
        json({"/usr/bin/gshare", "run", "--kernel", "t1", "--priority=5", "--env=A=1", "--",
              "/usr/bin/python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"}));
  CHECK(spec["display_name"] == kDefaultKernelDisplayName);
  CHECK(spec["language"] == "python");
  CHECK(spec["interrupt_mode"] == "signal");
  CHECK(spec["metadata"]["gshare"]["version"] == GSHARE_VERSION);
  CHECK(IsGshareKernelSpec(spec));
  CHECK(KernelSpecOptions(spec) == std::vector<std::string>{"--priority=5", "--env=A=1"});
  CHECK(KernelSpecCommand(spec) == std::vector<std::string>{"/usr/bin/python3", "-m",
                                                            "ipykernel_launcher", "-f",
                                                            "{connection_file}"});
  args.display_name = "GPU";
  args.options.clear();
  spec = KernelSpecJson(args);
  CHECK(spec["display_name"] == "GPU");
  CHECK(KernelSpecOptions(spec).empty());

  CHECK_FALSE(IsGshareKernelSpec(json::parse(R"({"argv": ["python3", "-m", "ipykernel"]})")));
  CHECK_FALSE(IsGshareKernelSpec(json::parse(R"({"argv": ["g", "run", "--kernel"]})")));
  CHECK_FALSE(IsGshareKernelSpec(json::parse(R"({"argv": ["g", "run", "--kernel", 5]})")));
  CHECK_FALSE(IsGshareKernelSpec(json::parse(R"({"argv": "g run --kernel x"})")));
  CHECK_FALSE(IsGshareKernelSpec(json::parse("[1]")));
}

TEST_CASE("a kernel's job is named after the notebook Jupyter names") {
  CHECK(KernelJobName("/home/a/work/analysis.ipynb", "t1") == "analysis");
  CHECK(KernelJobName("work/My Notebook.ipynb", "t1") == "My Notebook");
  CHECK(KernelJobName("console-1", "t1") == "console-1");
  CHECK(KernelJobName("", "t1") == "t1");
  CHECK(KernelJobName("dir/", "t1") == "t1");
  CHECK(KernelJobName(nullptr, "t1") == "t1");
}

TEST_CASE("kernel specs are written whole and read back") {
  TempDir dir;
  const std::string spec_dir = dir.File("kernels/t1");
  json spec = {{"argv", {"g", "run", "--kernel", "t1"}}, {"display_name", "x"}};
  REQUIRE(WriteKernelSpec(spec_dir, spec).ok());
  Result<json> back = ReadKernelSpec(spec_dir);
  REQUIRE(back.ok());
  CHECK(back.value() == spec);
  spec["display_name"] = "y";
  REQUIRE(WriteKernelSpec(spec_dir, spec).ok());
  CHECK(ReadKernelSpec(spec_dir).value()["display_name"] == "y");
  CHECK_FALSE(ReadKernelSpec(dir.File("kernels/none")).ok());
  dir.Write("kernels/t1/kernel.json", "{not json");
  CHECK_FALSE(ReadKernelSpec(spec_dir).ok());
}

}  // namespace
}  // namespace gshare::unit_kernel_spec
