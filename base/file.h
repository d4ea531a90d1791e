// Writing files and folders so that a reader (or a run killed half way)
// sees the old content or the new one, never a mix.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <system_error>
#include <string>
#include <string_view>

#include "base/status.h"

namespace referee::base {

// Writes `bytes` to `path` (created or truncated, mode 0644), without fsync:
// for the files of a folder that is then installed whole (swap_install_dir).
// Post: ok(); else Error "cannot write <path>: <reason>".
Status write_file(const std::string& path, std::string_view bytes);

// Writes `bytes` to `path`: to "<path>.tmp-<pid>" in the same folder, fsync,
// rename over `path`, then fsync of the folder so that the rename itself
// reaches the disk. Post: ok() and `path` holds `bytes`; else Error with
// message "cannot write <file>: <reason>", `path` as it was and no temporary
// file left.
Status write_file_atomic(const std::string& path, std::string_view bytes);
// The same with the file's mode (0600: a secret only its owner reads; the
// file has that mode from its first byte, never a wider one). With a mode
// other than 0644 the temporary file is made afresh (O_EXCL, O_NOFOLLOW):
// never one that exists, never through a link.
Status write_file_atomic(const std::string& path, std::string_view bytes, mode_t mode);
// The same for callers that report errors as text: false with *error = the message.
bool write_file_atomic(const std::string& path, std::string_view bytes, std::string* error);

// Copies the file `from` to `to` as write_file_atomic writes (temporary file,
// fsync, rename, fsync of the folder), in pieces of 64 KiB: memory does not
// grow with the file. *sha256 (when not null) = the SHA-256 (hex) of the bytes
// copied. Post: ok() and `to` holds what `from` held; else Error ("cannot read
// <from>: <reason>", "cannot write <to>: <reason>") with `to` as it was.
Status copy_file_atomic(const std::string& from, const std::string& to, std::string* sha256 = nullptr);

// Reads a whole small file (a description, a scaling.json) into *out. Opened
// without waiting and refused unless it is a regular file, so that a FIFO or
// a device named like one never blocks the caller. Error: "is missing",
// "is a folder, not a file", "is not a regular file", or the reason.
Status read_regular_file(const std::filesystem::path& p, std::string* out);

// Whether `ec`, from a std::filesystem query (is_directory, status), says a
// path could not be read (no permission, a link loop, an I/O error), as
// against its not being there, which the query reports too.
inline bool read_error(const std::error_code& ec) {
  return ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory;
}

// Where `p` leads once every link is followed (*real), and whether that is
// inside the folder `root` (itself resolved): false where it leads out, or
// where either cannot be resolved. A file of a package that is a link to
// something outside it is not the package's to read or copy.
// `root_resolved`: `root` is resolved already (weakly_canonical), so not again.
bool resolves_within(const std::filesystem::path& p, const std::filesystem::path& root, std::filesystem::path* real,
                     bool root_resolved = false);

// Puts the folder `staging` in the place of `target` (a folder, a file or
// nothing) in one step where the file system allows it:
// - no `target`: a rename;
// - else renameat2(RENAME_EXCHANGE): `staging` then holds the earlier
//   content;
// - where the file system has no exchange (EINVAL, ENOSYS, EOPNOTSUPP): the
//   earlier content is moved aside to "<staging>.old", `staging` renamed in,
//   and on failure the earlier content put back.
// Pre: `staging` and `target` are in the same file system (beside each other).
// Post: ok() with *old = where the earlier content now lies (the caller
// removes it), or empty when there was none. Else Error ("cannot move
// <staging> into <target>: <reason>", "cannot move the earlier <target>
// aside: <reason>" or "cannot replace <target>: <reason>") with `target` as it
// was and *old empty, except when the earlier content could not be put back:
// then *old is where it lies (keep it).
Status swap_install_dir(const std::filesystem::path& staging, const std::filesystem::path& target,
                        std::filesystem::path* old);

// A per-user place in the XDG manner: $<own_var> when set and not empty, else
// $<xdg_var>/<rel>, else $HOME/<home_base>/<rel>, else `fallback` (relative to
// the working folder). For example ("REFEREE_CACHE", "XDG_CACHE_HOME",
// ".cache", "referee", ".referee-cache").
std::string user_path(const char* own_var, const char* xdg_var, const char* home_base, const std::string& rel,
                      const std::string& fallback);

}  // namespace referee::base
