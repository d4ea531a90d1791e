// Build-time generator of the assets' translation unit (reports/assets.h).
//   embed_assets OUT.cc ASSET... [-- LICENSE...]
//   ASSET:   SITE_PATH=CONTENT_TYPE=FILE  (text/* gets "; charset=utf-8")
//   LICENSE: NAME=VERSION=FILE   (assembled into assets/LICENSES.txt, last)
// Each asset is also written compressed (gzip at level 9, brotli at its best
// quality), once here rather than on every request of `referee serve`.
// Writes OUT.cc only when its content changes (and through a temporary file and
// a rename), so that a rebuild that changes nothing recompiles nothing.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <brotli/encode.h>
#include <zlib.h>

namespace {

// The bytes as gzip (deflate at level 9 in a gzip wrapper), or "" on failure.
std::string gzip(const std::string& bytes) {
  z_stream z{};
  if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK) return "";
  std::string out(deflateBound(&z, bytes.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return rc == Z_STREAM_END ? out : "";
}

// The bytes as brotli at its best quality (what a server could not afford per request), or "" on failure.
std::string brotli(const std::string& bytes) {
  size_t size = BrotliEncoderMaxCompressedSize(bytes.size());
  if (size == 0) return "";
  std::string out(size, '\0');
  if (!BrotliEncoderCompress(BROTLI_MAX_QUALITY, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_TEXT, bytes.size(),
                             reinterpret_cast<const uint8_t*>(bytes.data()), &size, reinterpret_cast<uint8_t*>(out.data())))
    return "";
  out.resize(size);
  return out;
}

bool read_file(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *out = s.str();
  return static_cast<bool>(in) || in.eof();
}

// SITE=TYPE=FILE; FILE may itself contain '=' (only the first two split).
bool split3(const std::string& arg, std::string* a, std::string* b, std::string* c) {
  const auto i = arg.find('=');
  if (i == std::string::npos) return false;
  const auto j = arg.find('=', i + 1);
  if (j == std::string::npos) return false;
  *a = arg.substr(0, i);
  *b = arg.substr(i + 1, j - i - 1);
  *c = arg.substr(j + 1);
  return !a->empty() && !b->empty() && !c->empty();
}

// A C++ string literal for any bytes: octal escapes for everything outside
// printable ASCII (always three digits), lines of about 120 characters.
void literal(std::ostream& out, const std::string& bytes) {
  out << "\"";
  std::size_t col = 0;
  for (unsigned char ch : bytes) {
    if (col >= 120) {
      out << "\"\n\"";
      col = 0;
    }
    if (ch == '\\' || ch == '"') {
      out << '\\' << ch;
      col += 2;
    } else if (ch == '?') {  // no trigraphs
      out << "\\?";
      col += 2;
    } else if (ch >= 0x20 && ch < 0x7f) {
      out << ch;
      col += 1;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", ch);
      out << buf;
      col += 4;
    }
  }
  out << "\"";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: embed_assets OUT.cc SITE_PATH=CONTENT_TYPE=FILE... [-- NAME=VERSION=LICENSE_FILE...]\n";
    return 2;
  }
  const std::string out_path = argv[1];
  struct Item {
    std::string path, type, bytes;
  };
  std::vector<Item> items;
  std::string licenses =
      "Third-party software in this report's assets/ folder\n"
      "=====================================================\n\n"
      "The charts of these pages are drawn by the libraries below, bundled as published\n"
      "(minified builds). Their licence texts follow.\n";
  bool in_licenses = false;
  for (int k = 2; k < argc; ++k) {
    const std::string arg = argv[k];
    if (arg == "--") {
      in_licenses = true;
      continue;
    }
    std::string a, b, file, bytes;
    if (!split3(arg, &a, &b, &file)) {
      std::cerr << "embed_assets: argument '" << arg << "' is not NAME=VALUE=FILE\n";
      return 2;
    }
    if (!read_file(file, &bytes)) {
      std::cerr << "embed_assets: cannot read " << file << "\n";
      return 2;
    }
    if (in_licenses) {
      licenses += "\n\n---------------------------------------------------------------------------\n";
      licenses += a + " " + b + " (npm package " + a + ")\n";
      licenses += "---------------------------------------------------------------------------\n\n";
      licenses += bytes;
      if (!bytes.empty() && bytes.back() != '\n') licenses += '\n';
    } else {
      // Text is UTF-8 (served with that charset by `referee serve`).
      if (b.rfind("text/", 0) == 0 && b.find(';') == std::string::npos) b += "; charset=utf-8";
      items.push_back({a, b, std::move(bytes)});
    }
  }
  if (in_licenses) items.push_back({"assets/LICENSES.txt", "text/plain; charset=utf-8", licenses});

  std::ostringstream cc;
  cc << "// Generated by reports/web/embed_assets.cc at build time; do not edit.\n"
        "#include \"reports/assets.h\"\n\nnamespace referee::reports {\nnamespace {\n\n";
  // Each asset as it is, and compressed once here (gzip, brotli) for `referee
  // serve`; a compressed form no smaller than the bytes is left out ("").
  std::vector<std::string> gz(items.size()), br(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    gz[i] = gzip(items[i].bytes);
    br[i] = brotli(items[i].bytes);
    if (gz[i].size() >= items[i].bytes.size()) gz[i].clear();
    if (br[i].size() >= items[i].bytes.size()) br[i].clear();
    cc << "// " << items[i].path << "\nconstexpr char kAsset" << i << "[] =\n";
    literal(cc, items[i].bytes);
    cc << ";\nconstexpr char kGzip" << i << "[] =\n";
    literal(cc, gz[i]);
    cc << ";\nconstexpr char kBrotli" << i << "[] =\n";
    literal(cc, br[i]);
    cc << ";\n\n";
  }
  cc << "}  // namespace\n\nconst std::vector<Asset>& assets() {\n  static const std::vector<Asset> all = {\n";
  for (std::size_t i = 0; i < items.size(); ++i) {
    cc << "      {\"" << items[i].path << "\", \"" << items[i].type << "\", std::string_view(kAsset" << i << ", "
       << items[i].bytes.size() << "), std::string_view(kGzip" << i << ", " << gz[i].size()
       << "), std::string_view(kBrotli" << i << ", " << br[i].size() << ")},\n";
  }
  cc << "  };\n  return all;\n}\n\n}  // namespace referee::reports\n";

  const std::string text = cc.str();
  std::string old;
  if (read_file(out_path, &old) && old == text) return 0;
  const std::string tmp = out_path + ".tmp";
  {
    std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
    o << text;
    if (!o.flush()) {
      std::cerr << "embed_assets: cannot write " << tmp << "\n";
      return 2;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, out_path, ec);
  if (ec) {
    std::cerr << "embed_assets: cannot rename " << tmp << " to " << out_path << ": " << ec.message() << "\n";
    return 2;
  }
  return 0;
}
