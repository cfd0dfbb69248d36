#!/usr/bin/env python
import os
import sys

from twin import process

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twin.settings")
    # The settings read the process kind as they load, before Django picks the command; whoever sets it wins.
    os.environ.setdefault(process.ENVIRONMENT, process.of_command(sys.argv))
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
