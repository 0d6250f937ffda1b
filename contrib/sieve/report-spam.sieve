# IMAPSieve: a message moved or copied into Junk is told to textnb serve as spam.
require ["vnd.dovecot.pipe", "copy", "imapsieve"];

pipe :copy "textnb-learn-spam";
