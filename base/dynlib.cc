#include "base/dynlib.h"

#include <dlfcn.h>

#include <initializer_list>

namespace referee::base::dyn {

namespace {

struct Loader {
  void* handle = nullptr;
  std::string error;

  Loader(std::initializer_list<const char*> names, const char* package) {
    std::string tried;
    for (const char* n : names) {
      handle = dlopen(n, RTLD_NOW | RTLD_LOCAL);
      if (handle) return;
      const char* why = dlerror();
      tried += std::string(tried.empty() ? "" : "; ") + (why ? why : n);
    }
    error = std::string(*names.begin()) + " cannot be loaded (" + tried + "); this command needs it: apt-get install " +
            package;
  }

  template <class F>
  void get(const char* name, F* out) {
    if (!handle) return;
    void* p = dlsym(handle, name);
    if (!p) {
      if (error.empty()) error = std::string("the installed library lacks ") + name + "; install a current one";
      return;
    }
    *out = reinterpret_cast<F>(p);
  }
};

}  // namespace

const Curl* curl(std::string* error) {
  static Loader lib({"libcurl.so.4", "libcurl-gnutls.so.4"}, "libcurl4");
  static Curl api{};
  static const bool ok = [] {
    lib.get("curl_global_init", &api.global_init);
    lib.get("curl_easy_init", &api.easy_init);
    lib.get("curl_easy_cleanup", &api.easy_cleanup);
    lib.get("curl_easy_reset", &api.easy_reset);
    lib.get("curl_easy_setopt", &api.easy_setopt);
    lib.get("curl_easy_perform", &api.easy_perform);
    lib.get("curl_easy_getinfo", &api.easy_getinfo);
    lib.get("curl_easy_strerror", &api.easy_strerror);
    lib.get("curl_slist_append", &api.slist_append);
    lib.get("curl_slist_free_all", &api.slist_free_all);
    if (!lib.error.empty()) return false;
    if (api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      lib.error = "libcurl failed to initialise (curl_global_init)";
      return false;
    }
    return true;
  }();
  if (!ok) {
    *error = lib.error;
    return nullptr;
  }
  return &api;
}

const Archive* archive(std::string* error) {
  static Loader lib({"libarchive.so.13"}, "libarchive13");
  static Archive api{};
  static const bool ok = [] {
    lib.get("archive_read_new", &api.read_new);
    lib.get("archive_read_free", &api.read_free);
    lib.get("archive_read_support_filter_all", &api.read_support_filter_all);
    lib.get("archive_read_support_format_all", &api.read_support_format_all);
    lib.get("archive_read_open_filename", &api.read_open_filename);
    lib.get("archive_read_next_header", &api.read_next_header);
    lib.get("archive_read_data", &api.read_data);
    lib.get("archive_error_string", &api.error_string);
    lib.get("archive_entry_pathname", &api.entry_pathname);
    lib.get("archive_entry_pathname_utf8", &api.entry_pathname_utf8);
    lib.get("archive_entry_filetype", &api.entry_filetype);
    lib.get("archive_entry_hardlink", &api.entry_hardlink);
    lib.get("archive_write_new", &api.write_new);
    lib.get("archive_write_set_format_pax_restricted", &api.write_set_format_pax_restricted);
    lib.get("archive_write_add_filter_gzip", &api.write_add_filter_gzip);
    lib.get("archive_write_open_filename", &api.write_open_filename);
    lib.get("archive_write_header", &api.write_header);
    lib.get("archive_write_data", &api.write_data);
    lib.get("archive_write_close", &api.write_close);
    lib.get("archive_write_free", &api.write_free);
    lib.get("archive_entry_new", &api.entry_new);
    lib.get("archive_entry_free", &api.entry_free);
    lib.get("archive_entry_set_pathname", &api.entry_set_pathname);
    lib.get("archive_entry_set_size", &api.entry_set_size);
    lib.get("archive_entry_set_filetype", &api.entry_set_filetype);
    lib.get("archive_entry_set_perm", &api.entry_set_perm);
    lib.get("archive_entry_set_mtime", &api.entry_set_mtime);
    return lib.error.empty();
  }();
  if (!ok) {
    *error = lib.error;
    return nullptr;
  }
  return &api;
}

}  // namespace referee::base::dyn
