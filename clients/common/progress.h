#ifndef PLACEMENT_CLIENTS_COMMON_PROGRESS_H_
#define PLACEMENT_CLIENTS_COMMON_PROGRESS_H_

#include <cstdint>
#include <ostream>
#include <string>

namespace placement::clients {

// A one-line progress bar on stderr for long uploads, redrawn in place:
//   [##########          ] 12/24 runs uploaded, 0 failed
// Only when stderr is a terminal: a log file or a pipe gets nothing, so
// scripts and CI stay quiet.
class ProgressBar {
 public:
  // `unit`: what is counted ("runs", "samples").
  ProgressBar(std::string unit, int64_t total);
  // For tests: draws on `out` when `enabled`.
  ProgressBar(std::string unit, int64_t total, std::ostream& out, bool enabled);
  ~ProgressBar() { Done(); }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // `done` of the total so far; `note` follows the count ("uploaded, 0
  // failed").
  void Update(int64_t done, const std::string& note);
  // Ends the bar's line, before another message on stderr; the next Update
  // draws it again below.
  void Interrupt();
  void Done() { Interrupt(); }

  bool enabled() const { return enabled_; }

 private:
  const std::string unit_;
  const int64_t total_;
  std::ostream& out_;
  const bool enabled_;
  bool shown_ = false;
};

// Whether stderr is a terminal.
bool StderrIsTerminal();

}  // namespace placement::clients

#endif  // PLACEMENT_CLIENTS_COMMON_PROGRESS_H_
