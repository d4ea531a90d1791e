#include "base/file.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/digest.h"

namespace fs = std::filesystem;

namespace referee::base {

namespace {

std::string reason() { return std::strerror(errno); }

// Creates or truncates `path` and writes `bytes` to it, then fsync when
// `sync`. On failure the file is removed when `remove_on_error`.
Status write_whole(const std::string& path, std::string_view bytes, bool sync, bool remove_on_error,
                   mode_t mode = 0644, bool fresh = false) {
  // `fresh`: a file made by this call alone (never one that exists, never through a link): for secrets.
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (fresh ? O_EXCL | O_NOFOLLOW : O_TRUNC);
  int fd = ::open(path.c_str(), flags, mode);
  if (fd < 0) return Status::Error("cannot write " + path + ": " + reason());
  auto fail = [&](bool close_fd) {
    Status s = Status::Error("cannot write " + path + ": " + reason());
    if (close_fd) ::close(fd);
    if (remove_on_error) ::unlink(path.c_str());
    return s;
  };
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(true);
    done += static_cast<size_t>(n);
  }
  if (sync && ::fsync(fd) != 0) return fail(true);
  if (::close(fd) != 0) return fail(false);
  return Status::Ok();
}

}  // namespace

Status write_file(const std::string& path, std::string_view bytes) { return write_whole(path, bytes, false, false); }

Status write_file_atomic(const std::string& path_text, std::string_view bytes) {
  return write_file_atomic(path_text, bytes, 0644);
}

Status write_file_atomic(const std::string& path_text, std::string_view bytes, mode_t mode) {
  fs::path path(path_text);
  fs::path tmp = path;
  tmp += ".tmp-" + std::to_string(getpid());
  // A mode other than the default: a secret. Its temporary file is made afresh (a leftover of a run
  // killed half way is removed first; one that appears again is refused, never written through).
  const bool secret = mode != 0644;
  if (secret) ::unlink(tmp.c_str());
  if (Status s = write_whole(tmp.string(), bytes, true, true, mode, secret); !s.ok()) return s;
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status s = Status::Error("cannot write " + path.string() + ": " + reason());
    ::unlink(tmp.c_str());
    return s;
  }
  // The rename itself reaches the disk with its folder.
  int dfd = ::open(path.parent_path().empty() ? "." : path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::Ok();
}

Status copy_file_atomic(const std::string& from, const std::string& to_text, std::string* sha256) {
  // Opened without waiting (a FIFO would block the open until a writer came)
  // and refused unless it is a regular file: a FIFO, a device or a folder put
  // where a file was would hang the copy or never end.
  int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (in < 0) return Status::Error("cannot read " + from + ": " + reason());
  struct stat st {};
  if (::fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(in);
    return Status::Error("cannot read " + from + ": not a regular file");
  }
  ::fcntl(in, F_SETFL, ::fcntl(in, F_GETFL) & ~O_NONBLOCK);
  fs::path to(to_text);
  fs::path tmp = to;
  tmp += ".tmp-" + std::to_string(getpid());
  int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) {
    Status s = Status::Error("cannot write " + to.string() + ": " + reason());
    ::close(in);
    return s;
  }
  auto fail = [&](const std::string& what) {
    Status s = Status::Error(what + ": " + reason());
    ::close(in);
    ::close(out);
    ::unlink(tmp.c_str());
    return s;
  };
  Sha256 sha;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("cannot read " + from);
    if (n == 0) break;
    sha.update(std::string_view(buf, static_cast<size_t>(n)));
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::write(out, buf + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return fail("cannot write " + to.string());
      done += w;
    }
  }
  if (::fsync(out) != 0) return fail("cannot write " + to.string());
  ::close(in);
  if (::close(out) != 0 || ::rename(tmp.c_str(), to.c_str()) != 0) {
    Status s = Status::Error("cannot write " + to.string() + ": " + reason());
    ::unlink(tmp.c_str());
    return s;
  }
  int dfd = ::open(to.parent_path().empty() ? "." : to.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  if (sha256) *sha256 = sha.hex_digest();
  return Status::Ok();
}

bool write_file_atomic(const std::string& path, std::string_view bytes, std::string* error) {
  Status s = write_file_atomic(path, bytes);
  if (!s.ok()) *error = s.message;
  return s.ok();
}

Status swap_install_dir(const fs::path& staging, const fs::path& target, fs::path* old) {
  old->clear();
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(target, ec))) {
    if (::rename(staging.c_str(), target.c_str()) != 0)
      return Status::Error("cannot move " + staging.string() + " into " + target.string() + ": " + reason());
    return Status::Ok();
  }
  // One atomic step where the file system allows it: `staging` then holds the earlier content.
  if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
    *old = staging;
    return Status::Ok();
  }
  if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
    return Status::Error("cannot replace " + target.string() + ": " + reason());
  // Else move the earlier content aside, the new one in, and hand the earlier back.
  fs::path aside = staging;
  aside += ".old";
  if (::rename(target.c_str(), aside.c_str()) != 0)
    return Status::Error("cannot move the earlier " + target.string() + " aside: " + reason());
  if (::rename(staging.c_str(), target.c_str()) != 0) {
    Status s = Status::Error("cannot move " + staging.string() + " into " + target.string() + ": " + reason());
    if (::rename(aside.c_str(), target.c_str()) != 0) *old = aside;  // it stays there: keep it
    return s;
  }
  *old = aside;
  return Status::Ok();
}

std::string user_path(const char* own_var, const char* xdg_var, const char* home_base, const std::string& rel,
                      const std::string& fallback) {
  if (const char* p = std::getenv(own_var); p && *p) return p;
  if (const char* x = std::getenv(xdg_var); x && *x) return std::string(x) + "/" + rel;
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/" + home_base + "/" + rel;
  return fallback;
}

bool resolves_within(const std::filesystem::path& p, const std::filesystem::path& root, std::filesystem::path* real,
                     bool root_resolved) {
  std::error_code ec, rec;
  *real = std::filesystem::weakly_canonical(p, ec);
  const std::filesystem::path base = root_resolved ? root : std::filesystem::weakly_canonical(root, rec);
  if (ec || rec) return false;
  const std::string rel = real->lexically_relative(base).generic_string();
  return !rel.empty() && rel != "." && rel.rfind("..", 0) != 0;
}

Status read_regular_file(const std::filesystem::path& p, std::string* out) {
  out->clear();
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT) return Status::Error("is missing");
    return Status::Error(std::string("cannot be read: ") + std::strerror(e));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const bool dir = S_ISDIR(st.st_mode);
    ::close(fd);
    return Status::Error(dir ? "is a folder, not a file" : "is not a regular file (a FIFO, a device or a socket)");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  out->reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      return Status::Error(std::string("cannot be read: ") + std::strerror(e));
    }
    if (n == 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return Status::Ok();
}

}  // namespace referee::base
