/* exit() from a thread with a 64 KiB stack, with a leaked block: the leak
 * report at exit symbolizes, which must not run on that small stack. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *leak_and_exit(void *arg)
{
    (void)arg;
    char *p = malloc(100);
    p[0] = 1;
    p = NULL;
    fflush(stdout);
    exit(0);
}

int main(void)
{
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 65536);
    if (pthread_create(&t, &attr, leak_and_exit, NULL) != 0) return 2;
    pthread_join(t, NULL);
    return 3;
}
