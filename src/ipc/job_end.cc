#include "ipc/job_end.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>

#include "ipc/job_json.h"

namespace gshare {

nlohmann::json JobEndToJson(const JobEnd& end, int64_t job_id) {
  nlohmann::json j{{"job_id", job_id},
                   {"exit_code", end.exit_code ? nlohmann::json(*end.exit_code) : nlohmann::json()},
                   {"signal", end.signal ? nlohmann::json(*end.signal) : nlohmann::json()},
                   {"timed_out", end.timed_out}};
  if (end.interrupted) j["interrupted"] = true;
  if (!end.error.empty()) j["error"] = end.error;
  if (end.end_time) j["end_time"] = *end.end_time;
  return j;
}

JobEnd JobEndFromJson(const nlohmann::json& j) {
  JobEnd end;
  if (!j.is_object()) return end;
  auto integer = [&](const char* key) -> std::optional<int> {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) return std::nullopt;
    return it->get<int>();
  };
  end.exit_code = integer("exit_code");
  end.signal = integer("signal");
  auto t = j.find("timed_out");
  end.timed_out = t != j.end() && t->is_boolean() && t->get<bool>();
  auto i = j.find("interrupted");
  end.interrupted = i != j.end() && i->is_boolean() && i->get<bool>();
  auto e = j.find("error");
  if (e != j.end() && e->is_string()) end.error = e->get<std::string>();
  // A plausible unix time only (2001 .. 2286): a wrong clock or a hostile value must not
  // make a job end in another century.
  auto t_end = j.find("end_time");
  if (t_end != j.end() && t_end->is_number()) {
    double t = t_end->get<double>();
    if (t > 1e9 && t < 1e10) end.end_time = t;
  }
  return end;
}

namespace {
constexpr off_t kMaxJobEndBytes = 64 * 1024;  // a report is ~200 bytes
}  // namespace

std::string JobEndPath(const std::string& state_dir, int64_t job_id) {
  return state_dir + "/jobs/" + std::to_string(job_id) + ".end";
}

std::string JobStartPath(const std::string& state_dir, int64_t job_id) {
  return state_dir + "/jobs/" + std::to_string(job_id) + ".start";
}

Status WriteJobStart(const std::string& path) {
  std::string dir = path.substr(0, path.rfind('/'));
  mkdir(dir.c_str(), 0700);
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Error("cannot write " + path + ": " + std::strerror(errno));
  std::string text = std::to_string(getpid()) + "\n";
  bool ok =
      write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && fsync(fd) == 0;
  int err = errno;
  close(fd);
  if (!ok) return Status::Error("cannot write " + path + ": " + std::strerror(err));
  return Status::Ok();
}

Status WriteJobEnd(const std::string& path, const JobEnd& end, int64_t job_id) {
  std::string dir = path.substr(0, path.rfind('/'));
  mkdir(dir.c_str(), 0700);  // EEXIST is fine; other failures show at open
  std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Error("cannot write " + tmp + ": " + std::strerror(errno));
  std::string text = ToJsonText(JobEndToJson(end, job_id)) + "\n";
  bool ok =
      write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && fsync(fd) == 0;
  int err = errno;
  close(fd);
  if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
    if (ok) err = errno;
    unlink(tmp.c_str());
    return Status::Error("cannot write " + path + ": " + std::strerror(err));
  }
  return Status::Ok();
}

std::optional<JobEnd> ReadJobEnd(const std::string& path) {
  // Under the system daemon the file lies in its owner's directory, read by root: a link or
  // a FIFO put in its place must not be followed or block the daemon, a huge file not be
  // read whole.
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > kMaxJobEndBytes) {
    close(fd);
    return std::nullopt;
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  ssize_t n = pread(fd, text.data(), text.size(), 0);
  close(fd);
  if (n < 0) return std::nullopt;
  text.resize(static_cast<size_t>(n));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return JobEndFromJson(j);
}

JobState FinalStateOf(const JobEnd& end) {
  if (end.timed_out) return JobState::kTimeout;
  if (end.exit_code && *end.exit_code == 0 && !end.signal) return JobState::kCompleted;
  if (end.interrupted) return JobState::kCancelled;
  return JobState::kFailed;
}

}  // namespace gshare
