/* fork: the child gets its own heap (the memdbg heap is MAP_SHARED inside,
 * so this checks the atfork copy), can allocate and free, and the parent
 * does not see the child's writes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *shared_before;

int main(void)
{
    shared_before = malloc(64);
    strcpy(shared_before, "parent");
    char *many[1000];
    static char *big[10];
    for (int i = 0; i < 1000; i++) { many[i] = malloc(100 + i); memset(many[i], i & 0xff, 100 + i); }
    for (int i = 0; i < 10; i++) { big[i] = malloc(5000 * (i + 1) * (i + 1)); memset(big[i], i + 1, 5000 * (i + 1) * (i + 1)); }
    for (int round = 0; round < 3; round++) {
        pid_t pid = fork();
        if (pid < 0) return 2;
        if (pid == 0) {
            if (strcmp(shared_before, "parent") != 0) _exit(10);
            for (int i = 0; i < 1000; i++)
                for (int k = 0; k < 100 + i; k++) if ((unsigned char)many[i][k] != (i & 0xff)) _exit(11);
            for (int i = 0; i < 10; i++)
                for (int k = 0; k < 5000 * (i + 1) * (i + 1); k++) if (big[i][k] != i + 1) _exit(12);
            strcpy(shared_before, "child");
            for (int i = 0; i < 1000; i++) { free(many[i]); many[i] = 0; }
            char *q = malloc(5000);
            memset(q, 3, 5000);
            free(q);
            exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) { printf("child failed: %d\n", st); return 3; }
        if (strcmp(shared_before, "parent") != 0) { printf("child write leaked into parent\n"); return 4; }
        for (int i = 0; i < 1000; i++)
            for (int k = 0; k < 100 + i; k++) if ((unsigned char)many[i][k] != (i & 0xff)) return 5;
    }
    for (int i = 0; i < 1000; i++) free(many[i]);
    free(shared_before);
    puts("ok");
    return 0;
}
