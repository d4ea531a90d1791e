#include "cli/client.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include "mllog/json.h"
#include "base/dynlib.h"
#include "base/url.h"
#include "submissions/store.h"

namespace referee::cli {

void add_client_options(CLI::App& sub, ClientOptions* o, bool with_db) {
  sub.add_option("--server", o->server, "review server URL, e.g. http://127.0.0.1:8080 (default $REFEREE_SERVER; none: the local store)");
  sub.add_option("--token", o->token, "your token (default $REFEREE_TOKEN)");
  sub.add_option("--cacert", o->cacert, "PEM file of the certificate authority (or the self-signed certificate) to trust for an https server (default $REFEREE_CACERT)");
  sub.add_option("--timeout", o->timeout_s, "seconds a request to the server may take (default $REFEREE_TIMEOUT or 60)")
      ->check(CLI::Range(1L, 3600L));
  if (with_db)
    sub.add_option("--db", o->db,
                   "local store (default $REFEREE_DB or the user's data directory); not used with --server; given, "
                   "$REFEREE_SERVER is not used");
}

void resolve_client_options(ClientOptions* o) {
  // An explicit --db (without --server) is the local store, whatever $REFEREE_SERVER says.
  if (o->server.empty() && o->db.empty())
    if (const char* s = std::getenv("REFEREE_SERVER"); s && *s) o->server = s;
  if (o->token.empty())
    if (const char* t = std::getenv("REFEREE_TOKEN"); t && *t) o->token = t;
  if (o->cacert.empty())
    if (const char* c = std::getenv("REFEREE_CACERT"); c && *c) o->cacert = c;
  if (o->timeout_s <= 0) {
    o->timeout_s = 60;
    if (const char* t = std::getenv("REFEREE_TIMEOUT"); t && *t) {
      char* end = nullptr;
      long v = std::strtol(t, &end, 10);
      if (end && *end == '\0' && v > 0 && v <= 3600) o->timeout_s = v;
    }
  }
}

namespace {

size_t append_cb(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

review::Response transport_error(const std::string& message, const std::string& hint = "") {
  return review::error_response(0, "transport", message, hint);
}

// Whether an answer is one a referee server gives: JSON ({"error": {...}}
// for an error), or for a success a query's or report's documented type.
bool from_referee(const review::Response& r) {
  if (r.content_type == "application/json") {
    mllog::Json j;
    std::string e;
    if (!mllog::parse_json_permissive(r.body, &j, &e) || j.kind != mllog::Json::Kind::Object) return false;
    if (r.status >= 200 && r.status < 300) return true;
    const mllog::Json* err = j.find("error");
    return err && err->kind == mllog::Json::Kind::Object && err->find("message");
  }
  bool ok = r.status >= 200 && r.status < 300;
  return ok && (r.content_type == "text/plain" || r.content_type == "text/markdown" || r.content_type == "text/csv" ||
                r.content_type == "application/yaml");
}

// Sends `r` to `o.server` over HTTP(S) with libcurl (loaded at first use).
review::Response call_http(const ClientOptions& o, const review::Request& r) {
  std::string base = o.server;
  // The server's root: a URL given with the API's prefix (/api/v1) or
  // trailing slashes means the same server.
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (base.size() >= 7 && base.compare(base.size() - 7, 7, "/api/v1") == 0) base.resize(base.size() - 7);
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (base.rfind("http://", 0) != 0 && base.rfind("https://", 0) != 0)
    return transport_error("the server URL " + o.server + " is neither http:// nor https://",
                           "e.g. --server http://127.0.0.1:8080");
  // A token in clear text to another machine: said before it is sent (once).
  static bool warned = false;
  if (!r.token.empty() && base.rfind("http://", 0) == 0 && !base::is_loopback_host(base::url_host(base)) && !warned) {
    warned = true;
    std::cerr << "referee: WARNING: sending the token over plain HTTP to " << base::url_host(base)
              << ", which is not this machine: anyone on the way can read it and act as you; use an https:// server URL\n";
  }
  std::string load_error;
  const base::dyn::Curl* api = base::dyn::curl(&load_error);
  if (!api) return transport_error(load_error);
  std::unique_ptr<CURL, void (*)(CURL*)> curl(api->easy_init(), api->easy_cleanup);
  if (!curl) return transport_error("cannot start libcurl");
  std::string url = base + r.path;
  for (size_t i = 0; i < r.query.size(); ++i)
    url += (i ? "&" : "?") + base::percent_encode(r.query[i].first) + "=" + base::percent_encode(r.query[i].second);

  struct curl_slist* headers = nullptr;
  auto add_header = [&](const std::string& h) {
    if (auto* n = api->slist_append(headers, h.c_str())) headers = n;
  };
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> free_headers(nullptr, api->slist_free_all);
  add_header("Accept: application/json, text/plain, text/csv");
  if (!r.token.empty()) add_header("Authorization: Bearer " + r.token);
  if (!r.if_match.empty()) add_header("If-Match: " + r.if_match);
  if (!r.body.empty()) add_header("Content-Type: application/json");
  add_header("Expect:");  // no 100-continue round trip for bodies
  free_headers.reset(headers);

  char errbuf[CURL_ERROR_SIZE] = {0};
  std::string body, content_type;
  CURL* h = curl.get();
  api->easy_setopt(h, CURLOPT_URL, url.c_str());
  api->easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  api->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  api->easy_setopt(h, CURLOPT_USERAGENT, "referee/" REFEREE_VERSION);
  api->easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
  api->easy_setopt(h, CURLOPT_TIMEOUT, o.timeout_s > 0 ? o.timeout_s : 60L);
  api->easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  api->easy_setopt(h, CURLOPT_WRITEFUNCTION, append_cb);
  api->easy_setopt(h, CURLOPT_WRITEDATA, &body);
  api->easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  if (!o.cacert.empty()) api->easy_setopt(h, CURLOPT_CAINFO, o.cacert.c_str());
  if (r.method == "GET") {
    api->easy_setopt(h, CURLOPT_HTTPGET, 1L);
  } else {
    if (r.method != "POST") api->easy_setopt(h, CURLOPT_CUSTOMREQUEST, r.method.c_str());
    api->easy_setopt(h, CURLOPT_POST, 1L);
    api->easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
    api->easy_setopt(h, CURLOPT_POSTFIELDS, r.body.c_str());
  }
  CURLcode rc = api->easy_perform(h);
  if (rc != CURLE_OK) {
    std::string detail = errbuf[0] ? errbuf : api->easy_strerror(rc);
    switch (rc) {
      case CURLE_COULDNT_CONNECT:
      case CURLE_COULDNT_RESOLVE_HOST:
        return transport_error("no referee server at " + base + " (is referee serve running?): " + detail,
                               "check --server or REFEREE_SERVER");
      case CURLE_OPERATION_TIMEDOUT:
        return transport_error("the server at " + base + " did not answer within " +
                                   std::to_string(o.timeout_s > 0 ? o.timeout_s : 60L) + " s: " + detail,
                               "retry, or raise --timeout / REFEREE_TIMEOUT");
      case CURLE_PEER_FAILED_VERIFICATION:
      case CURLE_SSL_CONNECT_ERROR:
      case CURLE_SSL_CACERT_BADFILE:
      case CURLE_SSL_CERTPROBLEM:
        return transport_error("TLS with " + base + " failed: " + detail,
                               "for a server with a self-signed certificate pass --cacert PEM or set REFEREE_CACERT");
      default:
        return transport_error("request to " + base + " failed: " + detail);
    }
  }
  long status = 0;
  api->easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  char* ct = nullptr;
  api->easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
  review::Response out;
  out.status = static_cast<int>(status);
  out.body = std::move(body);
  out.content_type.clear();  // as the server said it: none is none
  if (ct) {
    out.content_type = ct;
    if (auto semi = out.content_type.find(';'); semi != std::string::npos) out.content_type.resize(semi);
    while (!out.content_type.empty() && out.content_type.back() == ' ') out.content_type.pop_back();
  }
  if (!from_referee(out))
    return transport_error(base + " does not look like a referee server (it answered HTTP " + std::to_string(status) +
                               " with " + (out.content_type.empty() ? "no content type" : out.content_type) + ")",
                           "check --server or REFEREE_SERVER: the URL of referee serve, e.g. http://127.0.0.1:8080");
  return out;
}

}  // namespace

bool local_store(const ClientOptions& o, std::string* db, review::Response* missing) {
  *db = o.db.empty() ? submissions::default_db_path() : o.db;
  std::error_code ec;
  if (std::filesystem::exists(*db, ec)) {
    // The review works on a store that an import made. A file that is not one
    // (empty, an SQLite database without referee's schema, damaged, from a
    // newer referee) is refused as the questions of `list` refuse it, and left
    // as it is: nothing is created or migrated in it.
    std::string why;
    if (!submissions::Store::open(*db, &why, submissions::OpenMode::ReadOnly, false)) {
      *missing = review::error_response(0, "no-store", why,
                                        "referee import DIR --round R --db " + *db +
                                            " makes a store; or name an existing store with --db PATH");
      return false;
    }
    return true;
  }
  *missing = review::error_response(
      0, "no-store",
      "no store at " + *db + (o.db.empty() ? " (the default: $REFEREE_DB, else the user's data directory)" : ""),
      "create one with referee import DIR --round R --db " + *db +
          ", or name an existing store with --db PATH (or $REFEREE_DB), or a server with --server URL");
  return false;
}

review::Response call_api(const ClientOptions& o, review::Request r) {
  r.token = o.token;
  if (!o.server.empty()) return call_http(o, r);
  r.local_admin = o.token.empty();
  std::string db;
  review::Response missing;
  if (!local_store(o, &db, &missing)) return missing;
  review::Api api(db);
  api.set_rules_dir(o.rules);
  return api.handle(r);
}

review::Response call_review(const ClientOptions& o, const review::Request& remote, const LocalCall& local) {
  if (!o.server.empty()) return call_api(o, remote);
  std::string db;
  review::Response answer;
  if (!local_store(o, &db, &answer)) return answer;
  review::Actor who;
  {
    review::Api api(db);
    review::Request r;
    r.token = o.token;
    r.local_admin = o.token.empty();
    if (!api.authenticate(r, &who, &answer)) return answer;
  }
  std::string error;
  std::unique_ptr<submissions::Store> store = submissions::Store::open(db, &error);
  if (!store) return review::error_response(500, "store", error);
  try {
    return local(*store, who);
  } catch (const std::exception& e) {  // as Api::handle: an unexpected failure is a 500 with the reason
    return review::error_response(500, "internal", e.what());
  }
}

}  // namespace referee::cli
