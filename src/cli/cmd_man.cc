// `gshare man`: the gshare(1) manual page in roff, generated from the same CLI11 definitions as
// --help and the completion scripts: every command with its description, options and examples,
// then the exit status and the files. `gshare man | man -l -` reads it; scripts/setup.sh
// installs it as ~/.local/share/man/man1/gshare.1.
#include <cstdio>
#include <string>

#include "cli/cli.h"

namespace gshare {
namespace {

// Text as roff reads it: backslashes and leading dots or quotes escaped.
std::string Roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if (c == ',') {
      out += ",\\:";  // a place to break a long list of names (groff's \: )
    } else {
      out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

std::string OptionNames(const CLI::Option& opt) {
  std::string names;
  for (const std::string& s : opt.get_snames()) names += (names.empty() ? "-" : ", -") + s;
  for (const std::string& l : opt.get_lnames()) names += (names.empty() ? "--" : ", --") + l;
  if (names.empty()) names = opt.get_name();  // a positional argument
  const bool named = !opt.get_snames().empty() || !opt.get_lnames().empty();
  if (named && opt.get_type_size() != 0 && !opt.get_type_name().empty()) {
    names += " " + opt.get_type_name();
  }
  return names;
}

void Options(const CLI::App& app, std::string* out) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_group().empty() || opt->get_name() == "--help") continue;  // internal, -h
    *out += ".TP\n.B " + Roff(OptionNames(*opt)) + "\n" + Roff(opt->get_description()) + "\n";
  }
}

std::string ManPage(const CLI::App& root) {
  std::string out =
      ".TH GSHARE 1 \"\" \"gshare " GSHARE_VERSION
      "\" \"User Commands\"\n"
      // Ragged right, no hyphens: option names and lists of field names are not words.
      ".ad l\n.nh\n"
      ".SH NAME\ngshare \\- share NVIDIA GPUs between jobs: run, queue and arbitrate them\n"
      ".SH SYNOPSIS\n.B gshare\n[\\fIOPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR...]\n"
      ".SH DESCRIPTION\n" +
      Roff(root.get_description()) +
      "\n.PP\nEvery command has --help; docs/cli.md in the source has the whole reference.\n"
      ".SH OPTIONS\n";
  Options(root, &out);
  out += ".SH COMMANDS\n";
  for (const CLI::App* sub : root.get_subcommands({})) {
    if (sub->get_group().empty()) continue;  // internal commands
    out += ".SS " + Roff(sub->get_name()) + "\n" + Roff(sub->get_description()) + "\n";
    Options(*sub, &out);
    for (const CLI::App* nested : sub->get_subcommands({})) {
      out += ".TP\n.B " + Roff(sub->get_name() + " " + nested->get_name()) + "\n" +
             Roff(nested->get_description()) + "\n";
    }
    if (!sub->get_footer().empty()) out += ".PP\n.nf\n" + Roff(sub->get_footer()) + "\n.fi\n";
  }
  out +=
      ".SH EXIT STATUS\n"
      "Data commands: 0 ok, 1 error, 2 bad usage, 5 refused by the system daemon's rules.\n"
      "\\fBrun\\fR, \\fBwait\\fR and \\fBlogs \\-f\\fR return the job's status: 124 when its time "
      "limit ended it, 125 when gshare failed, 126 and 127 when the command cannot run or is not "
      "found.\n"
      ".SH ENVIRONMENT\n"
      "Read by gshare:\n"
      ".TP\n.B GSHARE_SOCKET\nThe daemon's socket, in place of your own daemon's "
      "(gshare run sets it for its job, so that a nested gshare reaches the same daemon).\n"
      ".TP\n.B GSHARE_SYSTEM_SOCKET\nThe system daemon's socket (default "
      "/run/gshare/gshare.sock).\n"
      ".TP\n.B GSHARE_STATE_DIR\nWhere your daemon keeps its database, logs and job files when "
      "the config's [daemon] state_dir is unset (default $XDG_STATE_HOME/gshare).\n"
      ".TP\n.B GSHARE_DAEMON_TIMEOUT_MS\nHow long a command and a job's shim wait for the "
      "daemon's answer, 100 to 3600000 ms (default 10000).\n"
      ".TP\n.B GSHARE_SHIM\nThe libgshare.so to preload into jobs, in place of the one beside "
      "the binary.\n"
      ".TP\n.B GSHARE_MPS\nSet to 0 (or no, off, false) where gshare run or gshare submit "
      "runs: the job runs outside MPS (isolation), when [mps] is on. Lower-priority jobs then "
      "fill only its gaps, as outside MPS. Set inside the job it comes too late (MPS is chosen "
      "at launch), and its shim says so.\n"
      ".TP\n.B GSHARE_PRIORITY_INFLIGHT_US, GSHARE_PRIORITY_GAP_FILL, "
      "GSHARE_PRIORITY_CONCURRENT_US\nHow much a lower-priority job keeps queued beside a higher "
      "one, in microseconds of GPU time, and the percentage of the higher one's gaps it fills "
      "(docs/design.md, \"Priority lanes\").\n"
      ".TP\n.B GSHARE_PRIORITY_SM_PCT\nThe percentage of a GPU's SMs a lower-priority MPS client "
      "runs on while a higher job there is busy, 1 to 99 (default 70; 0 or 100: every SM); "
      "only that job's gaps while it has fallen behind its requests (for 0.5 s at most: a "
      "longer backlog is its new pace).\n"
      ".PP\nSet in a job's environment:\n"
      ".TP\n.B GSHARE_JOB_ID, GSHARE_JOB_NAME\nThe job's id and name.\n"
      ".TP\n.B GSHARE_ARRAY_JOB_ID, GSHARE_ARRAY_TASK_ID, GSHARE_ARRAY_TASK_COUNT, "
      "GSHARE_ARRAY_TASK_MIN, GSHARE_ARRAY_TASK_MAX\nAn array task's place, as Slurm's "
      "SLURM_ARRAY_* variables.\n"
      ".TP\n.B GSHARE_MEMORY\nThe job's memory engine (swap, checkpoint, managed or off).\n"
      ".TP\n.B GSHARE_JOB_TOKEN, GSHARE_IDLE_RELEASE_MS, GSHARE_EARLY_RELEASE\nFor the shim: the "
      "job's secret and its lease settings; not to be set by hand.\n"
      ".TP\n.B CUDA_VISIBLE_DEVICES\nThe GPUs the job was placed on, and with MPS "
      "CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_CLIENT_PRIORITY.\n"
      ".SH FILES\n"
      ".TP\n.I ~/.config/gshare/gshare.toml\nYour configuration (configs/gshare.toml documents "
      "every key).\n"
      ".TP\n.I /etc/gshare/gshare.toml\nThe system daemon's configuration.\n"
      ".TP\n.I $XDG_RUNTIME_DIR/gshare/gshare.sock, /run/gshare/gshare.sock\n"
      "The sockets of your daemon and of the system daemon.\n"
      ".SH SEE ALSO\n.BR nvidia-smi (1),\n.BR sbatch (1),\n.BR squeue (1),\n.BR sacct (1)\n";
  return out;
}

}  // namespace

void AddManCommand(CLI::App& sub, const GlobalOptions&, Handler* handler) {
  sub.footer("Examples:\n  gshare man | man -l -\n  gshare man > ~/.local/share/man/man1/gshare.1");
  CLI::App* root = sub.get_parent();
  *handler = [root]() {
    std::fputs(ManPage(*root).c_str(), stdout);
    return 0;
  };
}

}  // namespace gshare
