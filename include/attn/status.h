// attn/status.h: the one error type of the library.
//
// Every public entry returns a Status. Each failure has its own code so a
// firmware engineer can tell from one integer what went wrong, and
// status_name() turns it into a stable, printable identifier.
#pragma once

#include <cstdint>

namespace attn {

// The codes, their numbers and meanings: attn/status_list.h (one list for
// the C++ and the C API).
enum class [[nodiscard]] Status : int32_t{
// NOLINTBEGIN(bugprone-macro-parentheses): its arguments are names and types
#define ATTN_STATUS(cpp_name, c_name, value, doc) cpp_name = value,
// NOLINTEND(bugprone-macro-parentheses)
#include "attn/status_list.h"
#undef ATTN_STATUS
};

// A stable identifier for the code, e.g. "kArenaTooSmall". Never null.
const char* status_name(Status s);

inline constexpr bool ok(Status s) { return s == Status::kOk; }

}  // namespace attn

// Propagate a non-OK Status to the caller.
#define ATTN_TRY(expr)                              \
  do {                                              \
    const ::attn::Status attn_try_status_ = (expr); \
    if (attn_try_status_ != ::attn::Status::kOk) {  \
      return attn_try_status_;                      \
    }                                               \
  } while (0)
