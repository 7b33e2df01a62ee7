#include "daemon/observe/metrics_publisher.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/listen_address.h"

namespace gshare {

Status ReplaceFile(const std::string& path, const std::string& text) {
  const size_t slash = path.rfind('/');
  const std::string tmp = path.substr(0, slash + 1) + "." + path.substr(slash + 1) + ".tmp";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return Status::Error("cannot write " + tmp + ": " + strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      close(fd);
      unlink(tmp.c_str());
      return Status::Error("cannot write " + tmp + ": " + strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  // fchmod: the daemon's umask (077) would keep the collector, another user, out.
  fchmod(fd, 0644);
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(tmp.c_str());
    return Status::Error("cannot rename " + tmp + " to " + path + ": " + strerror(err));
  }
  return Status::Ok();
}

MetricsPublisher::MetricsPublisher(Config::Metrics config, Text text)
    : config_(std::move(config)), text_(std::move(text)) {}

void MetricsPublisher::Start(TimePoint now) {
  if (!config_.textfile.empty()) next_file_ = now;
  if (config_.listen.empty()) return;
  Result<ListenAddress> addr = ParseListenAddress(config_.listen, config_.allow_remote);
  Status st = addr.ok() ? Status::Ok() : addr.status();
  auto endpoint = std::make_unique<MetricsEndpoint>(text_);
  if (st.ok()) st = endpoint->Listen(addr.value(), config_.listen);
  if (!st.ok()) {
    spdlog::error("{}: no metrics endpoint", st.message());
    return;
  }
  endpoint_ = std::move(endpoint);
  spdlog::info("metrics on http://{}/metrics", config_.listen);
}

void MetricsPublisher::FileTick(TimePoint now) {
  if (!next_file_ || now < *next_file_) return;
  next_file_ = now + config_.textfile_interval;
  Status st = ReplaceFile(config_.textfile, text_());
  if (!st.ok() && st.message() != file_error_) spdlog::warn("metrics: {}", st.message());
  file_error_ = st.ok() ? "" : st.message();
}

}  // namespace gshare
