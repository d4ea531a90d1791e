// Builds .tar.gz and .zip archives in memory with libarchive, for tests that
// feed archives to the fetchers: ordinary files and folders, and the links,
// devices and unsafe paths a malicious archive might hold.
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace referee::testing {

// One archive entry. `content` is written for regular files only; `link` is
// a symbolic link's target, `hardlink` (when set) makes the entry a hard link
// to that path.
struct Entry {
  std::string path;
  std::string content;
  mode_t type = AE_IFREG;
  std::string link;      // symlink target
  std::string hardlink;  // hard link target
  Entry(std::string p, std::string c, mode_t t = AE_IFREG, std::string l = "", std::string h = "")
      : path(std::move(p)), content(std::move(c)), type(t), link(std::move(l)), hardlink(std::move(h)) {}
};

namespace detail {
inline la_ssize_t append_to_string(struct archive*, void* out, const void* buf, size_t n) {
  static_cast<std::string*>(out)->append(static_cast<const char*>(buf), n);
  return static_cast<la_ssize_t>(n);
}
}  // namespace detail

// The archive's bytes: `format` "tar.gz" (pax, gzip) or "zip". Entries are
// written in the given order, with fixed permissions and mtime, exactly as
// named (paths are not checked, so unsafe ones can be built).
inline std::string make_archive(const std::vector<Entry>& entries, const std::string& format = "tar.gz") {
  std::string out;
  struct archive* a = archive_write_new();
  if (format == "zip") {
    archive_write_set_format_zip(a);
  } else {
    archive_write_add_filter_gzip(a);
    archive_write_set_format_pax_restricted(a);
  }
  archive_write_set_bytes_in_last_block(a, 1);
  REQUIRE(archive_write_open(a, &out, nullptr, detail::append_to_string, nullptr) == ARCHIVE_OK);
  for (const auto& e : entries) {
    struct archive_entry* en = archive_entry_new();
    archive_entry_set_pathname(en, e.path.c_str());
    archive_entry_set_filetype(en, e.type);
    archive_entry_set_perm(en, e.type == AE_IFDIR ? 0755 : 0644);
    archive_entry_set_mtime(en, 1700000000, 0);
    if (e.type == AE_IFLNK) archive_entry_set_symlink(en, e.link.c_str());
    if (!e.hardlink.empty()) archive_entry_set_hardlink(en, e.hardlink.c_str());
    const bool data = e.type == AE_IFREG && e.hardlink.empty();
    archive_entry_set_size(en, data ? static_cast<la_int64_t>(e.content.size()) : 0);
    REQUIRE(archive_write_header(a, en) == ARCHIVE_OK);
    if (data && !e.content.empty())
      REQUIRE(archive_write_data(a, e.content.data(), e.content.size()) == static_cast<la_ssize_t>(e.content.size()));
    archive_entry_free(en);
  }
  REQUIRE(archive_write_close(a) == ARCHIVE_OK);
  archive_write_free(a);
  return out;
}

}  // namespace referee::testing
