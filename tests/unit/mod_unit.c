// SPDX-License-Identifier: MIT
/* A module the unit tests dlopen and dlclose (test_modules.c). */
int mod_unit_function(int x);

int mod_unit_function(int x)
{
    return x * 3 + 1;
}
