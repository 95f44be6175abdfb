// Package ui holds the console's look: one semantic Styles value and pure
// render functions that turn topology values into strings of a given width.
// Nothing here performs I/O, reads the clock or keeps state between calls,
// so every view can be golden-tested from a fixture.
package ui

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// Styles is every style the console uses, named by meaning rather than by
// colour so that light and dark palettes stay interchangeable.
type Styles struct {
	IsDark bool

	Text   lipgloss.Style
	Muted  lipgloss.Style
	Faint  lipgloss.Style
	Accent lipgloss.Style
	Bold   lipgloss.Style
	OK     lipgloss.Style
	Warn   lipgloss.Style
	Danger lipgloss.Style

	// Brand is the product badge at the left of the title bar.
	Brand lipgloss.Style
	// ReadOnly is the badge that says actions are switched off.
	ReadOnly lipgloss.Style
	// Crumb and CrumbSep draw the breadcrumb under the title bar.
	Crumb    lipgloss.Style
	CrumbSep lipgloss.Style
	// Chip is a small inverted label (filter, trace) in the breadcrumb.
	Chip lipgloss.Style

	// TableHeader styles column titles; Selected is the cursor row's base.
	TableHeader lipgloss.Style
	Selected    lipgloss.Style
	Section     lipgloss.Style
	// Hop marks rows a traced message passes through.
	Hop lipgloss.Style
	// Bar and BarWarn fill depth bars; BarTrack is the unfilled part.
	Bar      lipgloss.Style
	BarWarn  lipgloss.Style
	BarTrack lipgloss.Style

	// Dialog frames overlays; DialogTitle heads them.
	Dialog      lipgloss.Style
	DialogTitle lipgloss.Style
	DangerTitle lipgloss.Style
	// Label names a form field; FocusedLabel the field being edited.
	Label        lipgloss.Style
	FocusedLabel lipgloss.Style
	Prompt       lipgloss.Style

	// Key and KeyDesc render key help; KeyOff a key switched off.
	Key     lipgloss.Style
	KeyDesc lipgloss.Style
	KeyOff  lipgloss.Style

	// Palette, for widgets (text inputs) that take colours rather than styles.
	AccentColor color.Color
	MutedColor  color.Color
}

// NewStyles builds the palette for a dark or a light terminal background.
// Foregrounds are picked for contrast on both; the only backgrounds are the
// badges, the selected row and dialogs, each with an explicit foreground.
func NewStyles(isDark bool) Styles {
	ld := lipgloss.LightDark(isDark)
	accent := ld(lipgloss.Color("#5A3FC0"), lipgloss.Color("#B4A5FF"))
	muted := ld(lipgloss.Color("#5F6B76"), lipgloss.Color("#8B949E"))
	faint := ld(lipgloss.Color("#9AA4AE"), lipgloss.Color("#5A636D"))
	ok := ld(lipgloss.Color("#1A7F37"), lipgloss.Color("#56D364"))
	warn := ld(lipgloss.Color("#9A6700"), lipgloss.Color("#E3B341"))
	danger := ld(lipgloss.Color("#CF222E"), lipgloss.Color("#FF7B72"))
	text := ld(lipgloss.Color("#1F2328"), lipgloss.Color("#E6EDF3"))
	selBg := ld(lipgloss.Color("#E4DEFC"), lipgloss.Color("#2F2A55"))
	badgeFg := ld(lipgloss.Color("#FFFFFF"), lipgloss.Color("#14111F"))

	base := lipgloss.NewStyle()
	return Styles{
		IsDark: isDark,
		Text:   base.Foreground(text),
		Muted:  base.Foreground(muted),
		Faint:  base.Foreground(faint),
		Accent: base.Foreground(accent),
		Bold:   base.Bold(true),
		OK:     base.Foreground(ok),
		Warn:   base.Foreground(warn),
		Danger: base.Foreground(danger),

		Brand:    base.Bold(true).Foreground(badgeFg).Background(accent).Padding(0, 1),
		ReadOnly: base.Bold(true).Foreground(badgeFg).Background(warn).Padding(0, 1),
		Crumb:    base.Bold(true).Foreground(accent),
		CrumbSep: base.Foreground(faint),
		Chip:     base.Foreground(badgeFg).Background(muted).Padding(0, 1),

		TableHeader: base.Bold(true).Foreground(muted),
		Selected:    base.Background(selBg).Foreground(text),
		Section:     base.Foreground(muted).Italic(true),
		Hop:         base.Bold(true).Foreground(accent),
		Bar:         base.Foreground(accent),
		BarWarn:     base.Foreground(warn),
		BarTrack:    base.Foreground(faint),

		Dialog:       base.Border(lipgloss.RoundedBorder()).BorderForeground(accent).Padding(0, 1),
		DialogTitle:  base.Bold(true).Foreground(accent),
		DangerTitle:  base.Bold(true).Foreground(danger),
		Label:        base.Foreground(muted),
		FocusedLabel: base.Bold(true).Foreground(accent),
		Prompt:       base.Bold(true).Foreground(accent),

		Key:     base.Bold(true).Foreground(accent),
		KeyDesc: base.Foreground(muted),
		KeyOff:  base.Foreground(faint).Strikethrough(true),

		AccentColor: accent,
		MutedColor:  muted,
	}
}
