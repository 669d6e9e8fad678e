package console

// LinkReasons exposes linkReasons to the external tests.
var LinkReasons = linkReasons
