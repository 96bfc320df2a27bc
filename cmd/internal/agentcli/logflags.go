package agentcli

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/onekube/onekube/agent/logging"
)

// LogFlags are the --log-format and --log-level every subcommand takes.
type LogFlags struct{ format, level string }

// Register adds the flags to fl.
func (l *LogFlags) Register(fl *pflag.FlagSet) {
	fl.StringVar(&l.format, "log-format", logging.LogAuto, "auto, text, json or journal")
	fl.StringVar(&l.level, "log-level", "info", "debug, info, warn or error")
}

// Logger builds the logger the flags ask for; a bad value is a usage error.
func (l *LogFlags) Logger(stderr io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(l.level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return logging.NewLogger(l.format, stderr, level)
}
