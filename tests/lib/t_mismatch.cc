/* SPDX-License-Identifier: MIT */
// alloc-dealloc-mismatch in its three common forms (argv[1]).

// TEST: alloc-dealloc-mismatch new[] / free
// RUN: %memdbg %t newarray_free
// EXIT: 1
// CHECK-ERROR: alloc-dealloc-mismatch
// CHECK: \(operator new \[\] vs free\)
// CHECK-STACK: ^free of 0x | free | release_with_free\(void\*\) | main
// CHECK-STACK: ^allocated by thread T0 here: | operator new\[\]\(unsigned long\) | make_array\(\) | main
//
// TEST: alloc-dealloc-mismatch new / delete[]
// RUN: %memdbg %t new_deletearray
// EXIT: 1
// CHECK-ERROR: alloc-dealloc-mismatch
// CHECK: \(operator new vs operator delete \[\]\)
// CHECK-STACK: ^operator delete \[\] of 0x | operator delete\[\]\(void\*\) | release_with_delete_array\(int\*\) | main
// CHECK-STACK: ^allocated by thread T0 here: | operator new\(unsigned long\) | make_object\(\) | main
//
// TEST: alloc-dealloc-mismatch malloc / delete
// RUN: %memdbg %t malloc_delete
// EXIT: 1
// CHECK-ERROR: alloc-dealloc-mismatch
// CHECK: \(malloc vs operator delete\)
// CHECK-STACK: ^operator delete of 0x | operator delete\(void\*(, unsigned long)?\) | release_with_delete\(char\*\) | main
// CHECK-STACK: ^allocated by thread T0 here: | malloc | make_malloc\(\) | main

#include <cstdio>
#include <cstdlib>
#include <cstring>

char *make_array() { return new char[40]; }
int *make_object() { return new int(5); }
void *make_malloc() { return malloc(12); }
void release_with_free(void *p) { free(p); }
void release_with_delete_array(int *p) { delete[] p; }
void release_with_delete(char *p) { delete (int *)(void *)p; }

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "newarray_free";
    if (!strcmp(mode, "newarray_free")) release_with_free(make_array());
    else if (!strcmp(mode, "new_deletearray")) release_with_delete_array(make_object());
    else if (!strcmp(mode, "malloc_delete")) release_with_delete((char *)make_malloc());
    puts("survived");
    return 0;
}
