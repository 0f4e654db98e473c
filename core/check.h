#ifndef PLACEMENT_CORE_CHECK_H_
#define PLACEMENT_CORE_CHECK_H_

// PLACEMENT_DCHECK(condition, message): an internal invariant, checked where
// PLACEMENT_DCHECKS is defined (Debug, sanitizer and fuzzing builds, see the
// top-level CMakeLists.txt) and compiled out of Release builds.
//
// An invariant is something the code itself guarantees: band edges in order,
// shares that sum to one, snapshot versions that only increase. A broken one
// is a bug in this program, so the check aborts at the line that found it,
// with the condition and the message, rather than letting a wrong plan go
// out. Anything that input can break (a request, a stored row, a file) is not
// an invariant: it is validated and answered with an absl::Status, in every
// build (docs/LAYOUT.md, "Invariants and errors").
//
//   PLACEMENT_DCHECK(band.low <= band.high, "band edges out of order");
//
// The condition is not evaluated in Release builds: it must have no side
// effects. It is still compiled there, so it cannot rot.

#include <cstdio>
#include <cstdlib>

namespace placement::core::check_internal {

[[noreturn]] inline void DcheckFailed(const char* condition,
                                      const char* message, const char* file,
                                      int line) {
  std::fprintf(stderr, "%s:%d: PLACEMENT_DCHECK(%s) failed: %s\n", file, line,
               condition, message);
  std::abort();
}

}  // namespace placement::core::check_internal

#ifdef PLACEMENT_DCHECKS
#define PLACEMENT_DCHECK(condition, message)                      \
  ((condition) ? static_cast<void>(0)                             \
               : ::placement::core::check_internal::DcheckFailed( \
                     #condition, message, __FILE__, __LINE__))
#else
#define PLACEMENT_DCHECK(condition, message)                \
  (static_cast<void>(sizeof(static_cast<bool>(condition))), \
   static_cast<void>(sizeof(message)))
#endif

#endif  // PLACEMENT_CORE_CHECK_H_
