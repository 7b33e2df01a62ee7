// `gshare top [-d SECONDS] [-n N] [-b [-w COLUMNS]] [--sort KEY]`: a live view of the GPUs and
// jobs (top_view.h), redrawn every SECONDS (default 1), with keys to steer the selected job: c
// cancel (asks y/n), h hold or release, + and - its priority, s suspend or resume; o changes the
// order, ? shows the help page. -b (batch, as top(1)) prints the frames as text instead, for
// scripts and logs; -n ends after N frames. Drawn with ncurses;
// colours unless NO_COLOR is set (https://no-color.org) or the terminal has none.
#include <curses.h>
#include <unistd.h>

#include <clocale>
#include <cstdlib>
#include <map>
#include <cstdio>
#include <ctime>

#include "base/job_state.h"
#include "base/user_name.h"
#include "cli/cli.h"
#include "cli/top_view.h"
#include "ipc/job_json.h"
#include "ipc/replies.h"

namespace gshare {
namespace {

using json = nlohmann::json;

struct TopOptions {
  double delay_s = 1.0;
  int iterations = 0;  // 0: until q
  bool batch = false;
  int width = 0;  // batch frames' columns; 0: $COLUMNS, else wide enough for every column
  TopSort sort = TopSort::kState;
};

// What the view shows besides the data: kept across frames, changed by keys.
struct ViewState {
  int64_t selected = 0;
  TopSort sort = TopSort::kState;
  bool help = false;
};

std::string Clock() {
  std::time_t t = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%H:%M:%S", std::localtime(&t));
  return buf;
}

// One frame's data: the status document (false and a message when no daemon answers).
bool FetchStatus(const GlobalOptions& global, json* status, std::string* message) {
  auto reply = RequestDaemon(global, proto::MsgType::kStatusRequest, StatusRequest{}.ToJson(),
                             /*start=*/false);
  if (!reply.ok()) {
    *message = reply.status().message();
    return false;
  }
  *status = std::move(reply.value());
  return true;
}

// The status document lists the active jobs and the 20 newest of the others: every pending
// job is put in instead, in the order admission considers them (as `gshare queue` lists them).
void AddPendingJobs(const GlobalOptions& global, json* status, std::string* message) {
  ListFilter pending;
  pending.states = {JobState::kPending};
  pending.order = ListFilter::Order::kQueueOrder;
  auto rows = ListJobs(global, pending, "");
  if (!rows.ok()) {
    *message = rows.status().message();
    return;
  }
  json jobs = json::array();
  for (auto& j : (*status)["jobs"]) {
    if (JobStateFromName(j.value("state", std::string())) != JobState::kPending) {
      jobs.push_back(std::move(j));
    }
  }
  for (const JobRecord& r : rows.value()) jobs.push_back(JobToJson(r));
  (*status)["jobs"] = std::move(jobs);
}

// One frame; `status` gets the document it shows (null when no daemon answered), which the
// keys act on until the next frame.
TopFrame FetchFrame(const GlobalOptions& global, const ViewState& view, int width,
                    std::string* message, json* status) {
  *status = nullptr;
  bool ok = FetchStatus(global, status, message);
  if (ok) AddPendingJobs(global, status, message);
  TopInput in;
  in.status = ok ? status : nullptr;
  in.gpus = SampleGpus();
  in.selected_job = view.selected;
  in.sort = view.sort;
  in.help = view.help;
  in.message = *message;
  in.clock = Clock();
  in.width = width;
  in.user_name = [](uint32_t uid) { return UserName(uid); };
  return RenderTop(in);
}

// A job-control request for the one job of `request.exact_ids`; the outcome as one line.
std::string Control(const GlobalOptions& global, JobControlRequest request) {
  std::string what = request.action + " job " + std::to_string(request.exact_ids.at(0));
  auto reply = RequestDaemon(global, proto::MsgType::kJobControl, request.ToJson(), false);
  if (!reply.ok()) return what + ": " + reply.status().message();
  Result<JobControlReply> outcome = JobControlReply::Parse(reply.value());
  if (!outcome.ok()) return what + ": " + outcome.status().message();
  for (const auto& o : outcome->results) {
    if (!o.error.empty()) return what + ": " + o.error;
  }
  return what + ": done";
}

int RunBatch(const GlobalOptions& global, const TopOptions& opt) {
  for (int i = 0; opt.iterations == 0 || i < opt.iterations; ++i) {
    if (i > 0) usleep(static_cast<useconds_t>(opt.delay_s * 1e6));
    std::string message;
    json status;
    ViewState view;
    view.sort = opt.sort;
    int width = opt.width;
    if (width == 0) {
      const char* columns = std::getenv("COLUMNS");
      width = columns != nullptr && std::atoi(columns) > 0 ? std::atoi(columns) : 1000;
    }
    TopFrame f = FetchFrame(global, view, width, &message, &status);
    for (const TopLine& l : f.lines) std::printf("%s\n", l.text.c_str());
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}

// Colour pairs by TopLine::Style (0: the terminal's own).
short PairOf(TopLine::Style s) {
  switch (s) {
    case TopLine::Style::kRunning: return 1;
    case TopLine::Style::kPending: return 2;
    case TopLine::Style::kFailed: return 3;
    default: return 0;
  }
}

void Draw(const TopFrame& f, bool color) {
  erase();
  int rows = LINES;
  for (int i = 0; i < static_cast<int>(f.lines.size()) && i < rows; ++i) {
    const TopLine& l = f.lines[i];
    attr_t a = A_NORMAL;
    if (l.style == TopLine::Style::kTitle || l.style == TopLine::Style::kHeader) a = A_REVERSE;
    if (l.style == TopLine::Style::kSelected) a = A_REVERSE | A_BOLD;
    if (l.style == TopLine::Style::kEnded) a = A_DIM;
    if (color && PairOf(l.style) != 0) a |= COLOR_PAIR(PairOf(l.style));
    attrset(a);
    mvaddnstr(i, 0, l.text.c_str(), COLS - 1);
  }
  attrset(A_NORMAL);
  refresh();
}

// Asks a yes/no question on the last line; true on y.
bool Confirm(const std::string& question) {
  attrset(A_BOLD);
  mvaddnstr(LINES - 1, 0, (question + " (y/n)").c_str(), COLS - 1);
  clrtoeol();
  attrset(A_NORMAL);
  refresh();
  timeout(-1);
  int ch = getch();
  return ch == 'y' || ch == 'Y';
}

// Job `id` of a status document; null when it is not listed.
json FindJob(const json& status, int64_t id) {
  auto jobs = status.find("jobs");
  if (jobs == status.end() || !jobs->is_array()) return nullptr;
  for (const auto& j : *jobs) {
    if (j.value("id", int64_t{0}) == id) return j;
  }
  return nullptr;
}

// What a key does to the selected job as `status` (the frame on the screen) shows it; the
// message to show, or "" for a key that does nothing. The daemon checks the request anew.
std::string Steer(const GlobalOptions& global, int ch, int64_t id, const json& status) {
  if (ch != 'c' && ch != 'h' && ch != '+' && ch != '-' && ch != 's') return "";
  if (id == 0) return "no job selected";
  if (status.is_null()) return "no daemon answers";
  const json j = FindJob(status, id);
  if (j.is_null()) return "job " + std::to_string(id) + " is gone";
  const std::optional<JobState> state = JobStateFromName(j.value("state", std::string()));
  int priority = j.value("priority", 0);
  // The row's job only: an array task's row never stands for its whole array.
  const auto on_row = [id](const char* action) {
    JobControlRequest request{action, {}};
    request.exact_ids = {id};
    return request;
  };
  switch (ch) {
    case 'c':
      if (!Confirm("cancel job " + std::to_string(id) + "?")) return "not cancelled";
      return Control(global, on_row("cancel"));
    case 'h':
      if (state != JobState::kPending) return "hold and release apply to pending jobs";
      return Control(global, on_row(j.value("held", false) ? "release" : "hold"));
    case '+':
    case '-': {
      JobControlRequest request = on_row("set-priority");
      request.priority = priority + (ch == '+' ? 1 : -1);
      return Control(global, request);
    }
    case 's': return Control(global, on_row(state == JobState::kSuspended ? "resume" : "suspend"));
    default: return "";
  }
}

int RunLive(const GlobalOptions& global, const TopOptions& opt) {
  if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
    std::fprintf(stderr, "gshare: top needs a terminal; use top -b for text frames\n");
    return kExitUsage;
  }
  std::setlocale(LC_ALL, "");
  initscr();
  cbreak();
  noecho();
  keypad(stdscr, TRUE);
  curs_set(0);
  const char* no_color = std::getenv("NO_COLOR");
  bool color = has_colors() && (no_color == nullptr || no_color[0] == '\0');
  if (color) {
    start_color();
    use_default_colors();
    init_pair(1, COLOR_GREEN, -1);
    init_pair(2, COLOR_YELLOW, -1);
    init_pair(3, COLOR_RED, -1);
  }
  ViewState view;
  std::string message;
  const int delay_ms = static_cast<int>(opt.delay_s * 1000);
  for (int frame = 0; opt.iterations == 0 || frame < opt.iterations; ++frame) {
    std::string fetched = message;
    json status;
    TopFrame f = FetchFrame(global, view, COLS, &fetched, &status);
    view.selected = f.selected_job;
    Draw(f, color);
    timeout(delay_ms);
    int ch = getch();
    if (ch == 'q' || ch == 'Q') break;
    auto at = std::find(f.jobs.begin(), f.jobs.end(), view.selected);
    if ((ch == KEY_DOWN || ch == 'j') && at != f.jobs.end() && at + 1 != f.jobs.end()) {
      view.selected = *(at + 1);
    } else if ((ch == KEY_UP || ch == 'k') && at != f.jobs.end() && at != f.jobs.begin()) {
      view.selected = *(at - 1);
    } else if (ch == '?') {
      view.help = !view.help;
    } else if (ch == 'o') {
      view.sort = static_cast<TopSort>((static_cast<int>(view.sort) + 1) % 5);
    } else if (ch != ERR && ch != KEY_RESIZE) {
      std::string outcome = Steer(global, ch, view.selected, status);
      if (!outcome.empty()) message = outcome;
    }
  }
  endwin();
  return 0;
}

}  // namespace

void AddTopCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  auto opt = std::make_shared<TopOptions>();
  sub.add_option("-d,--delay", opt->delay_s, "Seconds between frames (default 1)")
      ->check(CLI::Range(0.1, 3600.0));
  sub.add_option("-n,--iterations", opt->iterations, "Stop after N frames (default: until q)")
      ->check(CLI::NonNegativeNumber);
  sub.add_flag("-b,--batch", opt->batch, "Print the frames as text (no terminal needed)");
  sub.add_option("-w,--width", opt->width,
                 "Columns of a batch frame (default: $COLUMNS, else every column)")
      ->check(CLI::Range(20, 1000));
  sub.add_option("--sort", opt->sort,
                 "Order of the jobs: state (default), priority, gpu-time, "
                 "memory or id (in the live view: the o key)")
      ->transform(
          CLI::CheckedTransformer(std::map<std::string, TopSort>{{"state", TopSort::kState},
                                                                 {"priority", TopSort::kPriority},
                                                                 {"gpu-time", TopSort::kGpuTime},
                                                                 {"memory", TopSort::kMemory},
                                                                 {"id", TopSort::kId}},
                                  CLI::ignore_case));
  sub.footer(
      "Keys: q quit, up/down (j/k) select a job, c cancel it, h hold or release it (pending),\n"
      "+/- raise or lower its priority, s suspend or resume it, o change the order, ? help.\n"
      "Columns that do not fit the terminal are left out (REASON, NAME and the job's state\n"
      "always stay).\n"
      "Examples:\n  gshare top\n  gshare top -b -n 1 -w 80 --sort priority");
  *handler = [opt, &global]() {
    return opt->batch ? RunBatch(global, *opt) : RunLive(global, *opt);
  };
}

}  // namespace gshare
