// The files every report carries beside its pages (the page script, its style
// sheet, the chart libraries and their licence texts), compiled into the
// binary from reports/web/ (reports/web/embed_assets.cc, docs/reports.md).
#pragma once

#include <string_view>
#include <vector>

namespace referee::reports {

struct Asset {
  std::string_view path;          // relative to the site root: "assets/vega.min.js"
  std::string_view content_type;  // "text/javascript; charset=utf-8"
  std::string_view bytes;
  // The bytes compressed at build time, for a server to send as they are
  // (Content-Encoding gzip / br); "" where compression would not make them smaller.
  std::string_view gzip, brotli;
};

// assets/vega.min.js, assets/vega-lite.min.js, assets/vega-embed.min.js,
// assets/referee.js, assets/referee.css, assets/LICENSES.txt, in that order.
const std::vector<Asset>& assets();

}  // namespace referee::reports
