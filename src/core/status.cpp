// status.cpp: a stable name for every Status code.
#include "attn/status.h"

namespace attn {

const char* status_name(Status s) {
  switch (s) {
#define ATTN_STATUS(cpp_name, c_name, value, doc) \
  case Status::cpp_name:                          \
    return #cpp_name;
#include "attn/status_list.h"
#undef ATTN_STATUS
  }
  return "kUnknownStatus";
}

}  // namespace attn
