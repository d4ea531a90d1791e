// libcurl and libarchive, loaded when first used (dlopen), so that only the
// commands that download or unpack (`fetch`, `rules fetch`) pay for loading
// them and their dependencies. Their headers are needed to build; the
// libraries (Debian: libcurl4, libarchive13) only to run those commands.
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <curl/curl.h>

#include <string>

namespace referee::base::dyn {

// The libcurl functions referee calls.
struct Curl {
  CURLcode (*global_init)(long flags);
  CURL* (*easy_init)();
  void (*easy_cleanup)(CURL*);
  void (*easy_reset)(CURL*);
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_perform)(CURL*);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  const char* (*easy_strerror)(CURLcode);
  struct curl_slist* (*slist_append)(struct curl_slist*, const char*);
  void (*slist_free_all)(struct curl_slist*);
};

// The libarchive functions referee calls.
struct Archive {
  struct archive* (*read_new)();
  int (*read_free)(struct archive*);
  int (*read_support_filter_all)(struct archive*);
  int (*read_support_format_all)(struct archive*);
  int (*read_open_filename)(struct archive*, const char*, size_t);
  int (*read_next_header)(struct archive*, struct archive_entry**);
  la_ssize_t (*read_data)(struct archive*, void*, size_t);
  const char* (*error_string)(struct archive*);
  const char* (*entry_pathname)(struct archive_entry*);
  const char* (*entry_pathname_utf8)(struct archive_entry*);
  __LA_MODE_T (*entry_filetype)(struct archive_entry*);
  const char* (*entry_hardlink)(struct archive_entry*);
  // Writing (referee package --tarball).
  struct archive* (*write_new)();
  int (*write_set_format_pax_restricted)(struct archive*);
  int (*write_add_filter_gzip)(struct archive*);
  int (*write_open_filename)(struct archive*, const char*);
  int (*write_header)(struct archive*, struct archive_entry*);
  la_ssize_t (*write_data)(struct archive*, const void*, size_t);
  int (*write_close)(struct archive*);
  int (*write_free)(struct archive*);
  struct archive_entry* (*entry_new)();
  void (*entry_free)(struct archive_entry*);
  void (*entry_set_pathname)(struct archive_entry*, const char*);
  void (*entry_set_size)(struct archive_entry*, la_int64_t);
  void (*entry_set_filetype)(struct archive_entry*, unsigned int);
  void (*entry_set_perm)(struct archive_entry*, __LA_MODE_T);
  void (*entry_set_mtime)(struct archive_entry*, time_t, long);
};

// Loaded once (thread-safe); curl_global_init has run. nullptr with *error
// ("... cannot be loaded: ...; install it: apt-get install ...") when the
// library or one of its functions is missing.
const Curl* curl(std::string* error);
const Archive* archive(std::string* error);

}  // namespace referee::base::dyn
