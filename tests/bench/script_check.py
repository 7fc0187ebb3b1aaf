"""What the tests of bench/'s Python scripts share: run the script under test, collect failed
expectations, and exit with their count."""
import subprocess
import sys


class ScriptCheck:
    def __init__(self, script):
        self.script = script
        self.failures = []

    def run(self, *arguments):
        return subprocess.run([sys.executable, self.script, *arguments], capture_output=True, text=True)

    def expect(self, condition, what):
        if not condition:
            self.failures.append(what)

    def finish(self):
        for failure in self.failures:
            print("FAILED:", failure)
        print("all passed" if not self.failures else f"{len(self.failures)} failed")
        sys.exit(1 if self.failures else 0)
