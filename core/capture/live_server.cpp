#include "core/capture/live_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace sl::capture {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool fill_address(const std::string& path, sockaddr_un& addr) {
  addr = {};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) return false;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return true;
}

// True when something accepts connections on `path` (a running viewer).
bool someone_listens(const sockaddr_un& addr) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

std::string program_of(const CaptureInfo& info) {
  return (info.process_name.empty() ? std::string("a program") : info.process_name) + " (pid " +
         std::to_string(info.pid) + ")";
}

}  // namespace

std::string default_live_socket() {
  const char* dir = std::getenv("XDG_RUNTIME_DIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/sightline-live-" + std::to_string(::getuid()) + ".sock";
}

int open_listen_socket(const std::string& path, std::string& error) {
  sockaddr_un addr;
  if (!fill_address(path, addr)) {
    error = "socket path '" + path + "' is empty or longer than " + std::to_string(sizeof addr.sun_path - 1) + " bytes";
    return -1;
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return error = std::string("cannot create a socket: ") + std::strerror(errno), -1;
  auto bind_it = [&] { return ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0; };
  if (!bind_it()) {
    int why = errno;
    struct stat st{};
    bool is_socket = ::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
    if (why != EADDRINUSE || !is_socket) {
      error = "cannot listen on " + path + ": " +
              (why == EADDRINUSE ? std::string("the path exists and is not a socket") : std::strerror(why));
      ::close(fd);
      return -1;
    }
    if (someone_listens(addr)) {
      error = "another Sightline viewer is already listening on " + path +
              " (use it, close it, or pass --socket with another path)";
      ::close(fd);
      return -1;
    }
    // Left behind by a viewer that crashed: nothing accepts on it, so it is ours to replace.
    ::unlink(path.c_str());
    if (!bind_it()) {
      error = "cannot listen on " + path + ": " + std::strerror(errno);
      ::close(fd);
      return -1;
    }
  }
  if (::listen(fd, 8) != 0) {
    error = "cannot listen on " + path + ": " + std::strerror(errno);
    ::close(fd);
    ::unlink(path.c_str());
    return -1;
  }
  return fd;
}

struct LiveServer::Connection {
  int fd = -1;
  std::unique_ptr<LiveCapture> own = std::make_unique<LiveCapture>();  // until its hello
  LiveCapture* capture = nullptr;  // own, or current_ once it said hello
  bool hello = false;
  uint64_t bytes = 0;
  Connection(int f) : fd(f), capture(own.get()) {}
  ~Connection() {
    if (fd >= 0) ::close(fd);
  }
};

LiveServer::LiveServer(std::function<void()> wake) : wake_(std::move(wake)) {}

LiveServer::~LiveServer() { stop(); }

void LiveServer::notify() const {
  if (wake_) wake_();
}

bool LiveServer::listen(const std::string& path, std::string& error) {
  if (listen_fd_ >= 0) return error = "already listening on " + path_, false;
  int fd = open_listen_socket(path, error);
  if (fd < 0) return false;
  {
    std::lock_guard lock(mutex_);
    listen_fd_ = fd;
    path_ = path;
    status_.socket = path;
    status_.listening = true;
  }
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  return true;
}

bool LiveServer::serve(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  {
    std::lock_guard lock(mutex_);
    if (status_.connected) {
      ::close(fd);
      return false;
    }
    pending_.push_back(fd);
  }
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  return true;
}

void LiveServer::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  conn_.reset();
  for (int fd : pending_) ::close(fd);
  pending_.clear();
  if (listen_fd_ >= 0) {
    ::close(listen_fd_);
    listen_fd_ = -1;
    ::unlink(path_.c_str());
  }
  std::lock_guard lock(mutex_);
  status_.listening = status_.connected = false;
}

LiveStatus LiveServer::status() const {
  std::lock_guard lock(mutex_);
  LiveStatus s = status_;
  if (s.connected) s.seconds = now_s() - hello_at_;
  return s;
}

uint64_t LiveServer::sync(CaptureData& mirror, uint64_t& session) const {
  std::lock_guard lock(mutex_);
  if (session != status_.session) mirror = {}, session = status_.session;
  if (!current_) return 0;
  const CaptureData& d = current_->data();
  if (mirror.records.size() > d.records.size()) mirror.records.clear();  // cannot happen; stay safe
  mirror.records.insert(mirror.records.end(), d.records.begin() + std::ptrdiff_t(mirror.records.size()), d.records.end());
  mirror.info = d.info;
  mirror.devices = d.devices;
  mirror.drops = d.drops;
  mirror.messages = d.messages;
  return status_.generation;
}

LiveServer::NewRecords LiveServer::take_new(uint64_t& session, size_t& cursor) const {
  std::lock_guard lock(mutex_);
  NewRecords out;
  if (session != status_.session) out.fresh = true, session = status_.session, cursor = 0;
  if (!current_) return out;
  const CaptureData& d = current_->data();
  cursor = std::min(cursor, d.records.size());
  out.records.assign(d.records.begin() + std::ptrdiff_t(cursor), d.records.end());
  cursor = d.records.size();
  out.info = d.info;
  out.devices = d.devices;
  out.generation = status_.generation;
  out.finished = status_.finished();
  return out;
}

void LiveServer::run() {
  std::vector<char> chunk(1 << 16);
  while (!stop_) {
    std::vector<int> arrived;
    {
      std::lock_guard lock(mutex_);
      arrived.swap(pending_);
    }
    for (int fd : arrived) adopt(fd);
    pollfd fds[2];
    nfds_t n = 0;
    if (listen_fd_ >= 0) fds[n++] = {listen_fd_, POLLIN, 0};
    if (conn_) fds[n++] = {conn_->fd, POLLIN, 0};
    int ready = ::poll(fds, n, 50);  // 50 ms: stop() and serve() are noticed promptly
    if (ready <= 0) continue;
    for (nfds_t i = 0; i < n; ++i) {
      if (!fds[i].revents) continue;
      if (fds[i].fd == listen_fd_) accept_one();
      else if (conn_ && fds[i].fd == conn_->fd) read_from(*conn_, chunk);
    }
  }
}

void LiveServer::accept_one() {
  int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd >= 0) adopt(fd);
}

void LiveServer::adopt(int fd) {
  if (conn_ && conn_->hello) {
    // One capture at a time: the second program's library sees its writes fail and carries on.
    ::close(fd);
    std::lock_guard lock(mutex_);
    ++status_.refused;
    status_.note = "refused a second capture while " + program_of(status_.info) + " is streaming (one at a time)";
    notify();
    return;
  }
  conn_ = std::make_unique<Connection>(fd);  // replaces a connection that never said hello
}

void LiveServer::read_from(Connection& c, std::vector<char>& chunk) {
  // Up to 1 MiB per round, so a fast producer cannot starve accept() or stop().
  for (int round = 0; round < 16; ++round) {
    ssize_t n = ::read(c.fd, chunk.data(), chunk.size());
    if (n < 0 && (errno == EINTR)) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
      close_connection(n < 0 ? std::string("reading the capture stream: ") + std::strerror(errno) : "");
      return;
    }
    c.bytes += uint64_t(n);
    std::unique_lock lock(mutex_);
    bool ok = c.capture->feed(chunk.data(), size_t(n));
    if (!c.hello && c.capture->generation() > 0) {  // its hello: this capture is now the one shown
      c.hello = true;
      current_ = std::move(c.own);
      kernels_counted_ = 0;
      ++status_.session;
      status_.has_capture = status_.connected = true;
      status_.ended = false;
      status_.cut.clear();
      status_.records = status_.kernels = status_.batches = status_.bytes = 0;
      hello_at_ = now_s();
    }
    if (c.hello) {
      const CaptureData& d = current_->data();
      for (; kernels_counted_ < d.records.size(); ++kernels_counted_)
        status_.kernels += d.records[kernels_counted_].kind == ActivityKind::Kernel;
      status_.info = d.info;
      status_.drops = d.drops;
      status_.records = d.records.size();
      status_.batches = current_->batches();
      status_.generation = current_->generation();
      status_.bytes = c.bytes;
      status_.ended = current_->ended();
      last_byte_at_ = now_s();
    }
    lock.unlock();
    if (!ok || c.capture->ended()) {
      close_connection(ok ? "" : c.capture->error());
      return;
    }
    notify();
  }
}

void LiveServer::close_connection(const std::string& why) {
  std::unique_ptr<Connection> c = std::move(conn_);
  {
    std::lock_guard lock(mutex_);
    if (c->hello) {
      status_.connected = false;
      status_.seconds = last_byte_at_ - hello_at_;
      if (!current_->finish()) status_.cut = why.empty() ? current_->error() : why;
      status_.ended = current_->ended() && status_.cut.empty();
    } else if (c->bytes > 0) {
      status_.note = "rejected a connection that sent no capture: " +
                     (c->capture->error().empty() ? std::string("it closed before its hello") : c->capture->error());
    }
  }
  notify();
}

}  // namespace sl::capture
