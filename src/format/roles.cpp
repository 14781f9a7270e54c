// roles.cpp: the canonical name of every tensor role, from attn/role_list.h.
#include "attn/model.h"

namespace attn {
namespace format {

const char* role_name(Role r) {
  switch (r) {
#define ATTN_ROLE(cpp_name, c_name, value, name, doc) \
  case Role::cpp_name:                                \
    return name;
#include "attn/role_list.h"
#undef ATTN_ROLE
  }
  return nullptr;
}

}  // namespace format
}  // namespace attn
