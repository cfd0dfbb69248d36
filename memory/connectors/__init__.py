"""The local server's four tools shaped for connector data (Slack-, GitHub-, PagerDuty-style activity).

memory_recall (recall.py), memory_lessons (lessons.py), memory_how_they_work (how_they_work.py) and
memory_next (next.py) read items through the metadata conventions in events.py; the registry lists them.
"""
