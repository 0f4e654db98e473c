#include "clients/common/progress.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>

#include "absl/strings/str_format.h"

namespace placement::clients {

bool StderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

ProgressBar::ProgressBar(std::string unit, int64_t total)
    : ProgressBar(std::move(unit), total, std::cerr, StderrIsTerminal()) {}

ProgressBar::ProgressBar(std::string unit, int64_t total, std::ostream& out,
                         bool enabled)
    : unit_(std::move(unit)), total_(total), out_(out), enabled_(enabled) {}

void ProgressBar::Update(int64_t done, const std::string& note) {
  if (!enabled_) return;
  constexpr int kWidth = 30;
  const int64_t clamped =
      std::clamp<int64_t>(done, 0, std::max<int64_t>(total_, 0));
  const int filled =
      total_ > 0 ? static_cast<int>(kWidth * clamped / total_) : kWidth;
  out_ << absl::StrFormat("\r[%s%s] %d/%d %s %s", std::string(filled, '#'),
                          std::string(kWidth - filled, ' '), done, total_,
                          unit_, note)
       << std::flush;
  shown_ = true;
}

void ProgressBar::Interrupt() {
  if (enabled_ && shown_) out_ << "\n" << std::flush;
  shown_ = false;
}

}  // namespace placement::clients
