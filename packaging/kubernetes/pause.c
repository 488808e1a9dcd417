/* The pod sandbox's process for packaging/kubernetes/node-check.sh: it holds the pod's
 * namespaces and does nothing else until it is told to stop. Built static, so the image is
 * this one file (no registry is reachable to pull registry.k8s.io/pause). As the sandbox's
 * PID 1 it also reaps the children that other containers sharing its PID namespace orphan. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig) {
    (void)sig;
    _exit(0);
}

static void reap(int sig) {
    (void)sig;
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
}

int main(void) {
    struct sigaction quit = {.sa_handler = stop};
    struct sigaction child = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP};
    sigaction(SIGINT, &quit, NULL);
    sigaction(SIGTERM, &quit, NULL);
    sigaction(SIGCHLD, &child, NULL);
    for (;;) {
        pause();
    }
    return EXIT_FAILURE;
}
