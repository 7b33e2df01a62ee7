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
