/* SPDX-License-Identifier: MIT */
// Sized and aligned operator delete checked against the block: deleting
// through a base class without a virtual destructor passes the base's
// size, a wrong alignment passes another alignment; both are reported as
// new-delete-type-mismatch with both values, as AddressSanitizer does.
// Mode in argv[1].

// TEST: new-delete-type-mismatch: delete through a base without a virtual destructor
// RUN: %memdbg %t base
// EXIT: 1
// CHECK-ERROR: new-delete-type-mismatch
// CHECK: ^operator delete of 0x[0-9a-f]+ thread T0$
// CHECK: ^  size of the allocated type:   40 bytes;$
// CHECK: ^  size of the deallocated type: 8 bytes\.$
// CHECK: ^  alignment of the allocated type:   default;$
// CHECK-STACK: ^operator delete of | operator delete\(void\*, unsigned long\) | delete_as_base | main
// CHECK-STACK: ^allocated by thread T0 here: | operator new\(unsigned long\) | make_derived | main
// CHECK: ^SUMMARY: memdbg: new-delete-type-mismatch in delete_as_base
//
// TEST: new-delete-type-mismatch: sized delete[] with another size
// RUN: %memdbg %t array
// EXIT: 1
// CHECK-ERROR: new-delete-type-mismatch
// CHECK: ^  size of the allocated type:   48 bytes;$
// CHECK: ^  size of the deallocated type: 32 bytes\.$
//
// TEST: new-delete-type-mismatch: aligned delete with another alignment
// RUN: %memdbg %t align
// EXIT: 1
// CHECK-ERROR: new-delete-type-mismatch
// CHECK: ^  size of the deallocated type: 64 bytes\.$
// CHECK: ^  alignment of the allocated type:   64 bytes;$
// CHECK: ^  alignment of the deallocated type: 32 bytes\.$
//
// TEST: new-delete-type-mismatch: plain delete of an aligned block
// RUN: %memdbg %t align_plain
// EXIT: 1
// CHECK-ERROR: new-delete-type-mismatch
// CHECK: ^  size of the deallocated type: not given\.$
// CHECK: ^  alignment of the allocated type:   128 bytes;$
// CHECK: ^  alignment of the deallocated type: default\.$
//
// TEST: new-delete-type-mismatch: halt_on_error=0 reports and frees
// RUN: %memdbg -o halt_on_error=0 %t base
// EXIT: 1
// CHECK-OUT: done
// CHECK-COUNT: 1 ERROR: memdbg: new-delete-type-mismatch
//
// TEST: sized and aligned delete with the right size and alignment: no report
// RUN: %memdbg %t right
// EXIT: 0
// CHECK-OUT: done
// CHECK-NOT: ERROR

#include <cstdio>
#include <cstring>
#include <new>

struct Base { long a; };
struct Derived : Base { long b[4]; };

Base *make_derived() { return new Derived(); }
void delete_as_base(Base *p) { operator delete(p, sizeof(Base)); }

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "base";
    if (!strcmp(mode, "base")) {
        delete_as_base(make_derived());
    } else if (!strcmp(mode, "array")) {
        void *p = operator new[](48);
        operator delete[](p, 32);
    } else if (!strcmp(mode, "align")) {
        void *p = operator new(64, std::align_val_t(64));
        operator delete(p, 64, std::align_val_t(32));
    } else if (!strcmp(mode, "align_plain")) {
        void *p = operator new(256, std::align_val_t(128));
        operator delete(p);
    } else if (!strcmp(mode, "right")) {
        void *p = operator new(40);
        operator delete(p, 40);
        p = operator new[](24);
        operator delete[](p, 24);
        p = operator new(64, std::align_val_t(64));
        operator delete(p, 64, std::align_val_t(64));
        p = operator new(64, std::align_val_t(256));
        operator delete(p, std::align_val_t(256));
        p = operator new(10, std::align_val_t(8));   // not beyond new's own: as plain new
        operator delete(p, 10);
        Base *b = new Base();
        delete b;
    }
    std::puts("done");
    return 0;
}
